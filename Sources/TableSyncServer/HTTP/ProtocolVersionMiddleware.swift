import HTTPTypes
import Hummingbird
import SyncProtocol

/// Reads what every table request must say: `ZUMO-API-VERSION`, as a header or query parameter (400 when missing
/// or unknown), and the query string (400 when malformed), into the ``TableRequestContext``.
struct ProtocolVersionMiddleware: RouterMiddleware {
    typealias Context = TableRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.query = try QueryString(request.uri.query)
        context.protocolVersion = try Self.protocolVersion(request, query: context.query)
        return try await next(request, context)
    }

    /// The version `ZUMO-API-VERSION` names, as a header or query parameter; 400 when missing or unknown.
    static func protocolVersion(_ request: Request, query: QueryString) throws(ProtocolError) -> ProtocolVersion {
        var versionText = request.headers[HTTPField.Name(ProtocolHeader.apiVersion)!]
        if versionText == nil { versionText = try query.value(namedIgnoringCase: ProtocolHeader.apiVersion) }
        guard let versionText else {
            throw ProtocolError.badRequest(
                "\(ProtocolHeader.apiVersion) is missing; send it as a header or query parameter (2.0.0 or 3.0.0)")
        }
        guard let version = ProtocolVersion(headerValue: versionText) else {
            throw ProtocolError.badRequest(
                "\(ProtocolHeader.apiVersion) '\(versionText)' is not supported; use 2.0.0 or 3.0.0")
        }
        return version
    }
}
