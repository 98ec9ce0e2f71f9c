import HTTPTypes
import Hummingbird
import SyncProtocol

/// Lets a request through only with a configured token, as `Authorization: Bearer <token>` or
/// `X-ZUMO-AUTH: <token>`; otherwise answers 401 with a JSON error. The health endpoint needs no token. Tokens
/// are compared in constant time (``TokenComparison``).
struct TokenAuthMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    let tokens: Set<String>
    let writer: ResponseWriter
    private let comparison: TokenComparison

    init(tokens: Set<String>, writer: ResponseWriter) {
        self.tokens = tokens
        self.writer = writer
        comparison = TokenComparison(tokens: tokens)
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if tokens.isEmpty || request.uri.path == TablePath.health { return try await next(request, context) }
        if let presented = Self.presentedToken(request.headers), comparison.accepts(presented) {
            return try await next(request, context)
        }
        return writer.error(.unauthorized, request: request)
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
