import HTTPTypes
import Hummingbird
import SyncProtocol

/// Reads what every table request says: `ZUMO-API-VERSION`, as a header or query parameter (400 when unknown; version 3
/// when missing), and the query string (400 when malformed), into the ``TableRequestContext``.
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

    /// The version `ZUMO-API-VERSION` names, as a header or query parameter; 400 when unknown. A request without it
    /// speaks version 3: Datasync's clients may leave the header out (their newer releases mark it obsolete) and its
    /// server then speaks its own protocol, while Azure Mobile Apps' v2 clients always send `2.0.0`.
    static func protocolVersion(_ request: Request, query: QueryString) throws(ProtocolError) -> ProtocolVersion {
        var versionText = request.headers[HTTPField.Name(ProtocolHeader.apiVersion)!]
        if versionText == nil { versionText = try query.value(namedIgnoringCase: ProtocolHeader.apiVersion) }
        guard let versionText else { return .v3 }
        guard let version = ProtocolVersion(headerValue: versionText) else {
            throw ProtocolError.badRequest(
                "\(ProtocolHeader.apiVersion) '\(versionText)' is not supported; use 2.0.0 or 3.0.0")
        }
        return version
    }
}
