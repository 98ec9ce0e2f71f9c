import Foundation
import Logging

/// Finds who a credential stands for: a static token (compared in constant time, ``TokenComparison``) or a JWT
/// (``JWTVerifier``).
struct Authenticator: Sendable {
    private let tokens: [StaticToken]
    private let comparison: TokenComparison
    private let verifier: JWTVerifier?

    init(tokens: [StaticToken], jwt: JWTSettings?, logger: Logger) {
        self.tokens = tokens
        comparison = TokenComparison(tokens: tokens.map(\.secret))
        verifier = jwt.map { JWTVerifier(settings: $0, logger: logger) }
    }

    /// Whether the server checks credentials at all: without tokens and JWT keys it runs open (loopback only).
    var checksCredentials: Bool { !tokens.isEmpty || verifier != nil }

    /// Loads what the first request would otherwise wait for (the JWT key set).
    func prepare() async {
        await verifier?.prepare()
    }

    /// The identity `credential` gives, or why it is refused.
    func identify(_ credential: String) async throws(TokenRefusal) -> RequestIdentity {
        if let index = comparison.match(credential) { return tokens[index].identity }
        guard let verifier else { throw TokenRefusal("the token is none of the configured tokens") }
        return try await verifier.verify(credential)
    }
}
