import CryptoExtras
import Foundation
import JWTKit
import TableSyncServer

/// The claims of the tokens ``TestTokenIssuer`` signs: each registered claim optional, so a test can leave one out.
public struct TestClaims: JWTPayload {
    public var exp: ExpirationClaim?
    public var nbf: NotBeforeClaim?
    public var iss: IssuerClaim?
    public var aud: AudienceClaim?
    public var sub: SubjectClaim?
    public var roles: [String]?

    /// Claims the test server accepts: its issuer and audience, valid from now for `lifetime` seconds.
    public init(sub: String?, lifetime: TimeInterval = 600, roles: [String]? = nil) {
        exp = ExpirationClaim(value: Date().addingTimeInterval(lifetime))
        nbf = NotBeforeClaim(value: Date().addingTimeInterval(-1))
        iss = IssuerClaim(value: TestTokenIssuer.issuer)
        aud = AudienceClaim(value: [TestTokenIssuer.audience])
        self.sub = sub.map(SubjectClaim.init(value:))
        self.roles = roles
    }

    /// Tests check claims through the server; signing checks nothing.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// An identity provider for tests: an HS256 shared key, RSA and P-256 keys by `kid` with their JWKS, and tokens
/// signed with any of them.
public struct TestTokenIssuer: Sendable {
    public static let issuer = "https://issuer.tablesync.test/"
    public static let audience = "tablesync-tests"

    /// The HS256 key, 32 random bytes.
    public let sharedKey: [UInt8]
    private let rsaKeys: [String: JWTKit.Insecure.RSA.PrivateKey]
    private let ecKeys: [String: ES256PrivateKey]

    /// A provider with a fresh shared key, an RSA key for each of `rsaKeyIDs` and a P-256 key for each of `ecKeyIDs`.
    public init(rsaKeyIDs: [String] = [], ecKeyIDs: [String] = []) throws {
        sharedKey = (0..<32).map { _ in UInt8.random(in: 0...255) }
        var rsa: [String: JWTKit.Insecure.RSA.PrivateKey] = [:]
        for kid in rsaKeyIDs {
            rsa[kid] = try JWTKit.Insecure.RSA.PrivateKey(
                pem: try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation)
        }
        rsaKeys = rsa
        ecKeys = Dictionary(uniqueKeysWithValues: ecKeyIDs.map { ($0, ES256PrivateKey()) })
    }

    /// Settings that accept this provider's HS256 tokens, and its RS256 and ES256 tokens from `keySet`.
    public func settings(keySet: JWTSettings.KeySetLocation? = nil, leeway: Duration = .zero) -> JWTSettings {
        var settings = JWTSettings(sharedKey: sharedKey, keySet: keySet, issuer: Self.issuer, audience: Self.audience)
        settings.leeway = leeway
        return settings
    }

    /// A JWKS with the public keys of `keyIDs`.
    public func jwks(_ keyIDs: [String]) throws -> String {
        var keys: [String] = []
        for kid in keyIDs {
            if let key = rsaKeys[kid] {
                let (modulus, exponent) = try key.publicKey.getKeyPrimitives()
                keys.append(
                    #"{"kty":"RSA","kid":"\#(kid)","use":"sig","alg":"RS256","n":"\#(Self.base64URL(modulus))","#
                        + #""e":"\#(Self.base64URL(exponent))"}"#
                )
            } else if let key = ecKeys[kid], let point = key.publicKey.parameters {
                keys.append(#"{"kty":"EC","kid":"\#(kid)","crv":"P-256","x":"\#(point.x)","y":"\#(point.y)"}"#)
            }
        }
        return #"{"keys":[\#(keys.joined(separator: ","))]}"#
    }

    /// `claims` signed with HS256 and the shared key.
    public func hs256(_ claims: TestClaims) async throws -> String {
        try await JWTKeyCollection().add(hmac: HMACKey(from: sharedKey), digestAlgorithm: .sha256).sign(claims)
    }

    /// `claims` signed with the RSA or P-256 key `kid` (RS256 or ES256), with `kid` in the header.
    public func signed(_ claims: TestClaims, kid: String) async throws -> String {
        let keys = JWTKeyCollection()
        let identifier = JWKIdentifier(string: kid)
        if let key = rsaKeys[kid] {
            await keys.add(rsa: key, digestAlgorithm: .sha256, kid: identifier)
        } else if let key = ecKeys[kid] {
            await keys.add(ecdsa: key, kid: identifier)
        }
        return try await keys.sign(claims, kid: identifier)
    }

    /// The PEM of the public RSA key `kid`: what an attacker who fetched the JWKS holds.
    public func publicPEM(_ kid: String) throws -> String {
        let (modulus, exponent) = try rsaKeys[kid]!.publicKey.getKeyPrimitives()
        return try _RSA.Signing.PublicKey(n: modulus, e: exponent).pemRepresentation
    }

    /// Base64url without padding, as JWTs and JWKs write bytes.
    public static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }
}
