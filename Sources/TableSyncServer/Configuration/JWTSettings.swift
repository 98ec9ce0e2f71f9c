import Foundation

/// How the server checks JSON Web Tokens: which keys sign them and what their claims must say.
///
/// HS256 tokens are checked with ``sharedKey`` (App Service's way), RS256 and ES256 tokens with the keys of
/// ``keySet`` (an OpenID Connect provider's JWKS) found by their `kid`. A token must name ``issuer`` in `iss` and
/// ``audience`` in `aud`, must carry `exp`, and is accepted from `nbf` to `exp` with ``leeway`` either side for
/// clocks that differ.
public struct JWTSettings: Sendable, Hashable {
    /// Where a key set comes from.
    public enum KeySetLocation: Sendable, Hashable, CustomStringConvertible {
        /// A JWKS file, read again as a URL would be fetched again.
        case file(String)
        /// A JWKS URL (`https://`, or `http://` on a loopback address).
        case url(String)

        /// `http://` or `https://` text as a URL, anything else as a file path.
        package init(parsing text: String) {
            let lowercased = text.lowercased()
            self = lowercased.hasPrefix("https://") || lowercased.hasPrefix("http://") ? .url(text) : .file(text)
        }

        /// The path or URL, as the start's log line names it.
        public var description: String {
            switch self {
            case .file(let path): return path
            case .url(let url): return url
            }
        }
    }

    /// The HS256 key's bytes; `nil` refuses HS256 tokens.
    public var sharedKey: [UInt8]?
    /// The RS256 and ES256 keys; `nil` refuses those tokens.
    public var keySet: KeySetLocation?
    /// The `iss` every token must carry.
    public var issuer: String
    /// The value `aud` must hold (one of its values when it is a list).
    public var audience: String
    /// How far `exp` and `nbf` may be passed or not yet reached, for clocks that differ.
    public var leeway: Duration = defaultLeeway
    /// The shortest time between two fetches of the key set that a token with an unknown `kid` makes.
    public var keySetRefreshInterval: Duration = defaultKeySetRefreshInterval
    /// The claim whose value (a string or a list of strings) holds the roles a table may require (``TableAccess``).
    public var roleClaim: String = defaultRoleClaim

    /// The default of ``leeway``: 60 s.
    package static let defaultLeeway = Duration.seconds(60)
    /// The default of ``keySetRefreshInterval``: 60 s.
    package static let defaultKeySetRefreshInterval = Duration.seconds(60)
    /// The default of ``roleClaim``: `roles`, as Microsoft Entra ID and many providers name it.
    package static let defaultRoleClaim = "roles"
    /// The environment variable that may hold the HS256 key instead of a file.
    package static let sharedKeyEnvironmentVariable = "TABLESYNC_SERVER_JWT_KEY"

    /// Settings that accept tokens signed with `sharedKey` (HS256) or a key of `keySet` (RS256, ES256), issued by
    /// `issuer` for `audience`; the other settings keep their defaults.
    public init(sharedKey: [UInt8]? = nil, keySet: KeySetLocation? = nil, issuer: String, audience: String) {
        self.sharedKey = sharedKey
        self.keySet = keySet
        self.issuer = issuer
        self.audience = audience
    }

    /// Checks the rules the server starts only with: a key, an issuer and an audience, a key of at least 32 bytes,
    /// a key set URL that TLS protects (or on this machine), time limits in range.
    public func validate() throws(ConfigurationError) {
        guard sharedKey != nil || keySet != nil else {
            throw ConfigurationError(
                """
                JWTs need keys: give --jwt-hs256-key-file FILE (or \(Self.sharedKeyEnvironmentVariable)) or --jwt-jwks \
                URL|FILE
                """
            )
        }
        if let sharedKey, sharedKey.count < 32 {
            throw ConfigurationError("the HS256 key must be at least 32 bytes (256 bits), not \(sharedKey.count)")
        }
        guard !issuer.isEmpty, !audience.isEmpty else {
            throw ConfigurationError(
                "JWTs need an issuer and an audience to check: give --jwt-issuer and --jwt-audience")
        }
        if case .url(let url)? = keySet, let components = URLComponents(string: url) {
            let host = components.host ?? ""
            guard components.scheme?.lowercased() == "https" || ServerConfiguration.isLoopback(host) else {
                throw ConfigurationError("the JWKS URL \(url) must be https:// (http:// only on a loopback address)")
            }
        } else if case .url(let url)? = keySet {
            throw ConfigurationError("the JWKS URL \(url) is not a URL")
        }
        guard !roleClaim.isEmpty else { throw ConfigurationError("--jwt-role-claim must not be empty") }
        for (name, value) in [("--jwt-leeway", leeway), ("--jwks-refresh-interval", keySetRefreshInterval)]
        where value < .zero || value > .seconds(86_400) {
            throw ConfigurationError("\(name) must be from 0 to 86400 seconds, not \(value)")
        }
    }

    /// The HS256 key of a key file's text: its bytes, without the surrounding whitespace.
    package static func sharedKey(fileContents: String) -> [UInt8] {
        Array(fileContents.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
    }
}
