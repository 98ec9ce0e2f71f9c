import Hummingbird
import SyncProtocol

/// Answers every request that needs the database with ``DatabaseAvailability/refusal`` at once while the database
/// is away, rather than letting it wait for a connection; a request that loses its connection on the way gets the
/// same answer and has the database checked at once.
struct DatabaseAvailabilityMiddleware: RouterMiddleware {
    typealias Context = TableRequestContext

    let availability: DatabaseAvailability

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard availability.isUp else { throw availability.refusal }
        do {
            return try await next(request, context)
        } catch {
            guard Self.meansDatabaseAway(error) else { throw error }
            availability.checkSoon()
            throw availability.refusal
        }
    }

    /// Whether `error` is a lost or refused connection to the database, raw or already answered as one.
    static func meansDatabaseAway(_ error: any Error) -> Bool {
        if let refusal = error as? ProtocolError { return refusal.code == .databaseUnavailable }
        return DatabaseFailure(error) == .unreachable
    }
}
