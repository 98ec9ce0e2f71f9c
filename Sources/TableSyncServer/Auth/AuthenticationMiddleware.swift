import HTTPTypes
import Hummingbird
import SyncProtocol

/// Reads a request's credentials, `Authorization: Bearer <token>` or `X-ZUMO-AUTH: <token>`, and puts who they
/// stand for in the ``TableRequestContext`` (``RequestIdentity``). Credentials that are sent must be valid: anything
/// else is a 401 (``ProtocolError/unauthorized``) that says nothing of why, while the log says why at info level,
/// with the request's id and never the token. A request without credentials goes on without an identity; each
/// route then decides whether it needs one (``AccessRule``), and a path the server does not serve is a 401 too on a
/// server that checks credentials, so that its routes are not told to anyone.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = TableRequestContext

    let authenticator: Authenticator

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard authenticator.checksCredentials else { return try await next(request, context) }
        guard let credential = Self.presentedCredential(request.headers) else {
            do {
                return try await next(request, context)
            } catch let error as HTTPError where error.status == .notFound {
                throw ProtocolError.unauthorized
            }
        }
        var context = context
        do {
            context.identity = try await authenticator.identify(credential)
        } catch {
            context.logger.info("refused the request's credentials", metadata: ["reason": "\(error)"])
            throw ProtocolError.unauthorized
        }
        context.logger[metadataKey: "identity"] = "\(context.identity?.name ?? "")"
        return try await next(request, context)
    }

    /// The credential of `headers`: `Authorization: Bearer` first, then `X-ZUMO-AUTH`.
    static func presentedCredential(_ headers: HTTPFields) -> String? {
        if let authorization = headers[HTTPField.Name(ProtocolHeader.authorization)!] {
            let prefix = ProtocolHeader.bearerPrefix
            if authorization.count > prefix.count,
                authorization.prefix(prefix.count).lowercased() == prefix.lowercased()
            {
                return authorization.dropFirst(prefix.count).trimmingCharacters(in: " ")
            }
        }
        return headers[HTTPField.Name(ProtocolHeader.zumoAuth)!]?.trimmingCharacters(in: " ")
    }
}
