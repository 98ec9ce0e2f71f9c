import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SyncProtocol

/// Adds the extensions header to every response, answers `Connection: close` with `Connection: close`, and gives
/// routes that do not exist a JSON 404 body.
///
/// The HTTP server closes a connection whose request said `Connection: close` without saying so in its answer;
/// RFC 9112 §9.6 asks the server to send `close` too, and a keep-alive proxy in front that does not see it reuses
/// the dead connection (and answers 502).
struct ProtocolHeadersMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    let extensions: Set<ProtocolExtension>
    let writer: ResponseWriter

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPResponseError where error.status == .notFound {
            response = writer.error(.notFound("there is nothing at \(request.uri.path); tables are at \(TablePath.tablesPrefix)/{table}"), request: request)
        } catch let error as HTTPResponseError where error.status == .methodNotAllowed {
            response = writer.error(ProtocolError(status: .methodNotAllowed, message: "\(request.method) is not allowed on \(request.uri.path)"), request: request)
        }
        response.headers[HTTPField.Name(ProtocolHeader.extensions)!] = ProtocolExtension.headerValue(extensions)
        if Self.asksToClose(request.headers[values: .connection]) { response.headers[.connection] = "close" }
        return response
    }

    /// `true` when the `Connection` header values name the `close` option (a comma-separated list, any case).
    static func asksToClose(_ values: [String]) -> Bool {
        values.contains { value in
            value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "close" }
        }
    }
}
