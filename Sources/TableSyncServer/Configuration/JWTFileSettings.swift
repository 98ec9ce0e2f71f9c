import SyncProtocol

/// The `jwt` object of the configuration file (``ServerConfigurationFile``): every member optional, flags win over
/// each. It names the HS256 key's file, never the key.
public struct JWTFileSettings: Sendable, Hashable {
    public var issuer: String?
    public var audience: String?
    /// A JWKS URL or file (``JWTSettings/KeySetLocation``).
    public var jwks: String?
    public var hs256KeyFile: String?
    /// Seconds; ``JWTSettings/leeway``.
    public var leeway: Double?
    /// Seconds; ``JWTSettings/keySetRefreshInterval``.
    public var jwksRefreshInterval: Double?
    public var roleClaim: String?

    public init() {}

    static func parse(_ value: JSONValue, path: String) throws(ConfigurationError) -> JWTFileSettings {
        guard case .object(let members) = value else { throw ConfigurationError("\(path): \"jwt\" must be an object") }
        var settings = JWTFileSettings()
        for (key, member) in members {
            let text = member.stringValue
            let seconds = member.doubleValue
            switch key {
            case "issuer" where text != nil: settings.issuer = text
            case "audience" where text != nil: settings.audience = text
            case "jwks" where text != nil: settings.jwks = text
            case "hs256KeyFile" where text != nil: settings.hs256KeyFile = text
            case "roleClaim" where text != nil: settings.roleClaim = text
            case "leeway" where seconds != nil: settings.leeway = seconds
            case "jwksRefreshInterval" where seconds != nil: settings.jwksRefreshInterval = seconds
            case "issuer", "audience", "jwks", "hs256KeyFile", "roleClaim":
                throw ConfigurationError("\(path): \"jwt\".\"\(key)\" must be a string")
            case "leeway", "jwksRefreshInterval":
                throw ConfigurationError("\(path): \"jwt\".\"\(key)\" must be a number of seconds")
            default:
                throw ConfigurationError(
                    """
                    \(path): unknown \"jwt\" setting \"\(key)\"; use issuer, audience, jwks, hs256KeyFile, leeway, \
                    jwksRefreshInterval or roleClaim
                    """
                )
            }
        }
        return settings
    }
}
