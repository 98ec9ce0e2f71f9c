import HTTPTypes
import Hummingbird
import NIOCore
import SyncProtocol

/// Adds the extensions header to every response, and gives routes that do not exist a JSON 404 body.
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
        return response
    }
}
