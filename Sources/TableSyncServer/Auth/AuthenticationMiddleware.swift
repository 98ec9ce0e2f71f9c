import HTTPTypes
import Hummingbird
import SyncProtocol

/// Reads a request's credentials, `Authorization: Bearer <token>` or `X-ZUMO-AUTH: <token>`, and puts who they
/// stand for in the ``TableRequestContext`` (``RequestIdentity``). Every credential sent must be valid, and when both
/// headers are sent they must stand for the same identity: anything else is a 401 (``ProtocolError/unauthorized``)
/// that says nothing of why, while the log says why at info level, with the request's id and never the token. A
/// request without credentials goes on without an identity; each route then decides whether it needs one
/// (``AccessRule``), and a path the server does not serve is a 401 too on a server that checks credentials, so that
/// its routes are not told to anyone.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = TableRequestContext

    let authenticator: Authenticator

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard authenticator.checksCredentials else { return try await next(request, context) }
        let credentials = Self.presentedCredentials(request.headers)
        guard let first = credentials.first else {
            do {
                return try await next(request, context)
            } catch let error as HTTPError where error.status == .notFound {
                throw ProtocolError.unauthorized
            }
        }
        var context = context
        do {
            // A garbage token beside a valid one is refused too: a client must not learn that one header is ignored.
            let identity = try await authenticator.identify(first)
            for credential in credentials.dropFirst() where try await authenticator.identify(credential) != identity {
                throw TokenRefusal("Authorization and X-ZUMO-AUTH stand for different identities")
            }
            context.identity = identity
        } catch {
            context.logger.info("refused the request's credentials", metadata: ["reason": "\(error)"])
            throw ProtocolError.unauthorized
        }
        context.logger[metadataKey: "identity"] = "\(context.identity?.name ?? "")"
        return try await next(request, context)
    }

    /// The credentials of `headers`: `Authorization: Bearer`'s, then `X-ZUMO-AUTH`'s, each when sent.
    static func presentedCredentials(_ headers: HTTPFields) -> [String] {
        var credentials: [String] = []
        if let authorization = headers[HTTPField.Name(ProtocolHeader.authorization)!] {
            let prefix = ProtocolHeader.bearerPrefix
            if authorization.count > prefix.count,
                authorization.prefix(prefix.count).lowercased() == prefix.lowercased()
            {
                credentials.append(authorization.dropFirst(prefix.count).trimmingCharacters(in: " "))
            }
        }
        if let zumo = headers[HTTPField.Name(ProtocolHeader.zumoAuth)!] {
            credentials.append(zumo.trimmingCharacters(in: " "))
        }
        return credentials
    }
}
