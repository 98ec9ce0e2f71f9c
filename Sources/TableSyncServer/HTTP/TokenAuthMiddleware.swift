import HTTPTypes
import Hummingbird
import SyncProtocol

/// Lets a request through only with a configured token, as `Authorization: Bearer <token>` or
/// `X-ZUMO-AUTH: <token>`; otherwise refuses it with 401 (``ProtocolError/unauthorized``). The health endpoint
/// needs no token. Tokens are compared in constant time (``TokenComparison``).
struct TokenAuthMiddleware: RouterMiddleware {
    typealias Context = TableRequestContext

    let tokens: Set<String>
    private let comparison: TokenComparison

    init(tokens: Set<String>) {
        self.tokens = tokens
        comparison = TokenComparison(tokens: tokens)
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if tokens.isEmpty || request.uri.path == TablePath.health { return try await next(request, context) }
        if let presented = Self.presentedToken(request.headers), comparison.accepts(presented) {
            return try await next(request, context)
        }
        throw ProtocolError.unauthorized
    }

    static func presentedToken(_ headers: HTTPFields) -> String? {
        if let authorization = headers[HTTPField.Name(ProtocolHeader.authorization)!] {
            let prefix = ProtocolHeader.bearerPrefix
            if authorization.count > prefix.count, authorization.prefix(prefix.count).lowercased() == prefix.lowercased() {
                return authorization.dropFirst(prefix.count).trimmingCharacters(in: " ")
            }
        }
        return headers[HTTPField.Name(ProtocolHeader.zumoAuth)!]?.trimmingCharacters(in: " ")
    }
}
