import Foundation
import JWTKit
import Logging

/// Checks JSON Web Tokens as ``JWTSettings`` say: the header's algorithm chooses the kind of key (``TokenHeader``),
/// jwt-kit checks the signature with that key alone, then the claims are checked (``TokenClaims``).
struct JWTVerifier: Sendable {
    private let settings: JWTSettings
    /// The shared key, ready once its collection was made (jwt-kit's collections are actors).
    private let sharedKey: Task<JWTKeyCollection, Never>?
    private let keySet: KeySetCache?

    init(settings: JWTSettings, logger: Logger) {
        self.settings = settings
        sharedKey = settings.sharedKey.map { key in
            Task { await JWTKeyCollection().add(hmac: HMACKey(from: key), digestAlgorithm: .sha256) }
        }
        keySet = settings.keySet.map {
            KeySetCache(location: $0, refreshInterval: settings.keySetRefreshInterval, logger: logger)
        }
    }

    /// Loads the key set, so the first request does not wait for it (a failure is logged and tried again later).
    func prepare() async {
        await keySet?.load()
    }

    /// The identity `token` gives at `now`, or why it is refused.
    func verify(_ token: String, now: Date = Date()) async throws(TokenRefusal) -> RequestIdentity {
        let header = try TokenHeader(token: token)
        let keys: JWTKeyCollection
        switch header.algorithm {
        case .hs256:
            guard let sharedKey else {
                throw TokenRefusal("HS256 tokens are not accepted: no shared key is configured")
            }
            keys = await sharedKey.value
        case .rs256, .es256:
            guard let keySet else {
                throw TokenRefusal("\(header.algorithm.rawValue) tokens are not accepted: no key set is configured")
            }
            guard let kid = header.keyID else { throw TokenRefusal("the \(header.algorithm.rawValue) JWT has no kid") }
            keys = try await keySet.keys(kid: kid, algorithm: header.algorithm)
        }
        let claims: TokenClaims
        do {
            claims = try await keys.verify(token, as: TokenClaims.self)
        } catch {
            throw TokenRefusal("the JWT's signature or payload does not verify")
        }
        return try claims.identity(settings: settings, now: now)
    }
}
