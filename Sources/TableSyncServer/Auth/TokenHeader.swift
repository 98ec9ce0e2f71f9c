import Foundation
import SyncProtocol

/// The signing algorithms the server accepts in a JWT's header, each checked only with keys of its own kind.
enum TokenAlgorithm: String, Sendable, Hashable {
    /// HMAC with SHA-256 and the shared key (``JWTSettings/sharedKey``).
    case hs256 = "HS256"
    /// RSA PKCS #1 v1.5 with SHA-256 and an RSA key of the key set.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256 and an EC key of the key set.
    case es256 = "ES256"
}

/// What the server reads of a JWT's header before it checks the signature: the algorithm, which decides the kind
/// of key (so an HS256 token is never checked with a public key as its secret, nor `none` accepted), and the
/// `kid` of the key.
struct TokenHeader: Sendable, Equatable {
    let algorithm: TokenAlgorithm
    let keyID: String?

    /// Reads the header of `token` (three base64url parts). Refuses a token of another shape, an algorithm other
    /// than HS256, RS256 and ES256 (`none` among them), and a `crit` header, whose extensions no key here knows.
    init(token: String) throws(TokenRefusal) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else {
            throw TokenRefusal("not a signed JWT (three non-empty parts)")
        }
        guard let bytes = Self.base64URLDecoded(parts[0]), let header = try? JSONParser.parse(bytes),
            case .object(let members) = header
        else {
            throw TokenRefusal("the JWT header is not base64url JSON")
        }
        guard let name = members["alg"]?.stringValue else { throw TokenRefusal("the JWT header has no alg") }
        guard let algorithm = TokenAlgorithm(rawValue: name) else {
            throw TokenRefusal("the JWT algorithm \(Self.printable(name)) is not accepted")
        }
        guard members["crit"] == nil else { throw TokenRefusal("the JWT header has crit extensions") }
        if let kid = members["kid"], kid.stringValue == nil { throw TokenRefusal("the JWT kid is not a string") }
        self.algorithm = algorithm
        keyID = members["kid"]?.stringValue
    }

    /// Base64url without padding, as JWTs encode their parts; `nil` for anything else.
    static func base64URLDecoded(_ text: Substring) -> [UInt8]? {
        guard
            text.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            })
        else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        return Data(base64Encoded: base64).map { Array($0) }
    }

    /// A header value as the log may show it: short, without control characters.
    static func printable(_ text: String) -> String {
        "'" + String(text.unicodeScalars.prefix(32).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
            + "'"
    }
}
