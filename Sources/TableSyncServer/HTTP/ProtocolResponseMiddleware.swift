import Foundation
import HTTPTypes
import Hummingbird
import Logging
import SyncProtocol

/// The middleware just inside ``RequestObservationMiddleware``, the one place every answer passes before it is
/// counted: errors become their JSON refusals, the extensions header goes on every response, and `Connection: close`
/// is answered in kind.
///
/// - A ``ProtocolError`` (and what ``ProtocolError/refusal(for:)`` maps to one) is rendered through the
///   ``ResponseWriter``; a path that does not exist gets a JSON 404, a method a path is not served with a JSON 405
///   with `Allow` (``RouteMethods``); anything else is a fault of the server: logged, and answered with a JSON 500
///   that says where to look.
/// - The HTTP server closes a connection whose request said `Connection: close` without saying so in its answer;
///   RFC 9112 §9.6 asks the server to send `close` too, and a keep-alive proxy in front that does not see it
///   reuses the dead connection (and answers 502).
struct ProtocolResponseMiddleware: RouterMiddleware {
    typealias Context = TableRequestContext

    let extensions: Set<ProtocolExtension>
    let writer: ResponseWriter

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = writer.error(refusal(for: error, request: request, logger: context.logger), request: request)
        }
        response.headers[HTTPField.Name(ProtocolHeader.extensions)!] = ProtocolExtension.headerValue(extensions)
        if Self.asksToClose(request.headers[values: .connection]) { response.headers[.connection] = "close" }
        return response
    }

    /// The refusal `error` stands for, or a 500 logged with the request's `logger` (which carries its id).
    private func refusal(for error: any Error, request: Request, logger: Logger) -> ProtocolError {
        if let refusal = ProtocolError.refusal(for: error) { return refusal }
        // The guard has answered this request itself and is closing its connection: nothing went wrong here.
        if error is RequestBodyCut { return .badRequest("\(error)") }
        if let error = error as? HTTPResponseError, error.status == .notFound || error.status == .methodNotAllowed {
            let path = request.uri.path
            guard let allowed = RouteMethods.allowed(path: path, batch: extensions.contains(.batch)),
                !allowed.contains(request.method)
            else {
                return .notFound("there is nothing at \(path); tables are at \(TablePath.tablesPrefix)/{table}")
            }
            return ProtocolError(
                status: .methodNotAllowed,
                message:
                    """
                    \(request.method) is not allowed on \(path); use \
                    \(allowed.map(\.rawValue).joined(separator: ", "))
                    """,
                allowedMethods: allowed)
        }
        logger.error(
            "request failed",
            metadata: [
                "method": "\(request.method)", "path": "\(request.uri.path)", "error": "\(String(reflecting: error))"
            ])
        return ProtocolError(
            status: .internalServerError, message: "the server failed to process the request; see its log")
    }

    /// `true` when the `Connection` header values name the `close` option (a comma-separated list, any case).
    static func asksToClose(_ values: [String]) -> Bool {
        values.contains { value in
            value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "close" }
        }
    }
}
