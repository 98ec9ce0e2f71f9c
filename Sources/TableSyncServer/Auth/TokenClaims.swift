import Foundation
import JWTKit

/// The claims of a JWT the server reads: the registered ones as jwt-kit's claim types, and every other claim
/// that holds a string or a list of strings (where the role claim is found).
struct TokenClaims: JWTPayload, Equatable {
    var exp: ExpirationClaim?
    var nbf: NotBeforeClaim?
    var iss: IssuerClaim?
    var aud: AudienceClaim?
    var sub: SubjectClaim?
    /// The other claims with string values, a single string as a list of one.
    var strings: [String: [String]] = [:]

    init(
        exp: Date? = nil, nbf: Date? = nil, iss: String? = nil, aud: [String]? = nil, sub: String? = nil,
        strings: [String: [String]] = [:]
    ) {
        self.exp = exp.map(ExpirationClaim.init(value:))
        self.nbf = nbf.map(NotBeforeClaim.init(value:))
        self.iss = iss.map(IssuerClaim.init(value:))
        self.aud = aud.map(AudienceClaim.init(value:))
        self.sub = sub.map(SubjectClaim.init(value:))
        self.strings = strings
    }

    private struct ClaimKey: CodingKey {
        let stringValue: String
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    private static let registered: Set<String> = ["exp", "nbf", "iss", "aud", "sub"]

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: ClaimKey.self)
        exp = try container.decodeIfPresent(ExpirationClaim.self, forKey: ClaimKey("exp"))
        nbf = try container.decodeIfPresent(NotBeforeClaim.self, forKey: ClaimKey("nbf"))
        iss = try container.decodeIfPresent(IssuerClaim.self, forKey: ClaimKey("iss"))
        aud = try container.decodeIfPresent(AudienceClaim.self, forKey: ClaimKey("aud"))
        sub = try container.decodeIfPresent(SubjectClaim.self, forKey: ClaimKey("sub"))
        for key in container.allKeys where !Self.registered.contains(key.stringValue) {
            if let value = try? container.decode(String.self, forKey: key) {
                strings[key.stringValue] = [value]
            } else if let values = try? container.decode([String].self, forKey: key) {
                strings[key.stringValue] = values
            }
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ClaimKey.self)
        try container.encodeIfPresent(exp, forKey: ClaimKey("exp"))
        try container.encodeIfPresent(nbf, forKey: ClaimKey("nbf"))
        try container.encodeIfPresent(iss, forKey: ClaimKey("iss"))
        try container.encodeIfPresent(aud, forKey: ClaimKey("aud"))
        try container.encodeIfPresent(sub, forKey: ClaimKey("sub"))
        for (name, values) in strings {
            if values.count == 1 {
                try container.encode(values[0], forKey: ClaimKey(name))
            } else {
                try container.encode(values, forKey: ClaimKey(name))
            }
        }
    }

    /// The claims are checked against the server's settings by ``identity(settings:now:)``, which knows them.
    func verify(using algorithm: some JWTAlgorithm) async throws {}

    /// The identity these claims give when they pass `settings` at `now`: `iss` and `aud` as configured, `exp`
    /// present and not passed, `nbf` reached (each with the leeway), and a `sub`, if any, that can own rows
    /// (1–255 bytes without control characters). Otherwise the reason for the refusal.
    func identity(settings: JWTSettings, now: Date) throws(TokenRefusal) -> RequestIdentity {
        let leeway = settings.leeway / .seconds(1)
        guard let exp else { throw TokenRefusal("the JWT has no exp") }
        do {
            try exp.verifyNotExpired(currentDate: now.addingTimeInterval(-leeway))
        } catch {
            throw TokenRefusal("the JWT expired at \(exp.value)")
        }
        if let nbf {
            do {
                try nbf.verifyNotBefore(currentDate: now.addingTimeInterval(leeway))
            } catch {
                throw TokenRefusal("the JWT is not valid before \(nbf.value)")
            }
        }
        guard iss?.value == settings.issuer else { throw TokenRefusal("the JWT's iss is not the configured issuer") }
        guard let aud else { throw TokenRefusal("the JWT has no aud") }
        do {
            try aud.verifyIntendedAudience(includes: settings.audience)
        } catch {
            throw TokenRefusal("the JWT's aud does not name the configured audience")
        }
        let subject = sub?.value
        if let subject {
            guard (1...255).contains(subject.utf8.count),
                !subject.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw TokenRefusal("the JWT's sub is empty, longer than 255 bytes or holds control characters")
            }
        }
        return RequestIdentity(
            name: subject.map { "sub \($0)" } ?? "a JWT without sub", subject: subject,
            roles: Set(strings[settings.roleClaim] ?? []))
    }
}
