import ArgumentParser
import Foundation
import TableSyncServer

/// The flags that configure JSON Web Tokens; each wins over the configuration file's `jwt` member of its name.
struct JWTOptions: ParsableArguments {
    @Option(
        name: .customLong("jwt-issuer"), help: "The iss every JWT must carry (an OpenID Connect provider's issuer URL)."
    )
    var issuer: String?

    @Option(
        name: .customLong("jwt-audience"),
        help: "The value a JWT's aud must hold (the client or API id the provider gives).")
    var audience: String?

    @Option(
        name: .customLong("jwt-jwks"),
        help: ArgumentHelp(
            """
            The RS256 and ES256 keys: a JWKS URL (https://, or http:// on loopback) or file, loaded again when a token \
            names an unknown kid.
            """,
            valueName: "URL|FILE"))
    var jwks: String?

    @Option(
        name: .customLong("jwt-hs256-key-file"),
        help:
            """
            A file holding the HS256 shared key (at least 32 bytes; or the environment variable \
            TABLESYNC_SERVER_JWT_KEY).
            """
    )
    var hs256KeyFile: String?

    @Option(
        name: .customLong("jwt-leeway"),
        help: "Seconds a JWT is still accepted after exp and already before nbf, for clocks that differ (default 60).")
    var leeway: Double?

    @Option(
        name: .customLong("jwks-refresh-interval"),
        help: "The fewest seconds between two loads of the key set that unknown kids cause (default 60).")
    var jwksRefreshInterval: Double?

    @Option(
        name: .customLong("jwt-role-claim"),
        help: "The claim holding the roles that table options role:NAME require (default roles).")
    var roleClaim: String?

    /// The settings the flags, the configuration `file` and `environment` give, or `nil` when none names a key.
    func settings(file: JWTFileSettings, environment: [String: String]) throws -> JWTSettings? {
        var sharedKey: [UInt8]?
        if let path = hs256KeyFile ?? file.hs256KeyFile {
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
            else {
                throw ConfigurationError("cannot read the HS256 key file \(path)")
            }
            sharedKey = JWTSettings.sharedKey(fileContents: text)
        } else if let text = environment[JWTSettings.sharedKeyEnvironmentVariable] {
            sharedKey = JWTSettings.sharedKey(fileContents: text)
        }
        let keySet = (jwks ?? file.jwks).map(JWTSettings.KeySetLocation.init(parsing:))
        let issuer = issuer ?? file.issuer
        let audience = audience ?? file.audience
        guard sharedKey != nil || keySet != nil || issuer != nil || audience != nil else { return nil }
        var settings = JWTSettings(sharedKey: sharedKey, keySet: keySet, issuer: issuer ?? "", audience: audience ?? "")
        if let seconds = leeway ?? file.leeway { settings.leeway = try Self.duration(seconds, flag: "--jwt-leeway") }
        if let seconds = jwksRefreshInterval ?? file.jwksRefreshInterval {
            settings.keySetRefreshInterval = try Self.duration(seconds, flag: "--jwks-refresh-interval")
        }
        if let claim = roleClaim ?? file.roleClaim { settings.roleClaim = claim }
        return settings
    }

    private static func duration(_ seconds: Double, flag: String) throws -> Duration {
        guard seconds.isFinite, (0...86_400).contains(seconds) else {
            throw ConfigurationError("\(flag) must be from 0 to 86400 seconds, not \(seconds)")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
