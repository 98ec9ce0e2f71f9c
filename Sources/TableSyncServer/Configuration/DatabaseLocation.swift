import Foundation

/// Where the server keeps its records: `sqlite:PATH` or
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE&sslrootcert=PATH]`.
public enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    /// A SQLite file (created when missing).
    case sqlite(path: String)
    /// A PostgreSQL database over TCP, with TLS as its URL says (``PostgresTLSMode``).
    case postgres(PostgresLocation)

    /// Parses the text form given to `--database`.
    package static func parse(_ text: String) throws(ConfigurationError) -> DatabaseLocation {
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else {
                throw ConfigurationError("--database sqlite: needs a file path, as in sqlite:server.sqlite")
            }
            return .sqlite(path: path)
        }
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            return .postgres(try PostgresLocation.parse(text))
        }
        throw ConfigurationError(
            """
            --database must be sqlite:PATH or postgres://USER@HOST[:PORT]/DATABASE[?sslmode=MODE], not \
            '\(text.replacingPassword())'
            """
        )
    }

    /// The location without its password, for logs.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let location):
            var text = "postgres://\(location.username)@\(location.host):\(location.port)/\(location.database)"
            var parameters: [String] = []
            if let mode = location.tlsMode { parameters.append("sslmode=\(mode.rawValue)") }
            if let path = location.rootCertificatePath { parameters.append("sslrootcert=\(path)") }
            if !parameters.isEmpty { text += "?" + parameters.joined(separator: "&") }
            return text
        }
    }
}

/// The parts of a `postgres://` URL.
public struct PostgresLocation: Sendable, Hashable {
    /// The server's host name or address.
    public var host: String
    /// The server's TCP port.
    public var port: Int
    /// The role the server connects as.
    public var username: String
    /// From the URL, or from the `PGPASSWORD` environment variable when the URL has none.
    public var password: String?
    /// The database's name.
    public var database: String
    /// `sslmode=` of the URL; `nil` when it names none (then `PGSSLMODE` applies, else ``PostgresTLSMode/default``).
    public var tlsMode: PostgresTLSMode?
    /// `sslrootcert=`: a PEM file of the authorities `verify-ca` and `verify-full` trust instead of the system's.
    public var rootCertificatePath: String?

    /// A location from its parts; the port defaults to PostgreSQL's own, 5432.
    public init(
        host: String, port: Int = 5432, username: String, password: String? = nil, database: String,
        tlsMode: PostgresTLSMode? = nil, rootCertificatePath: String? = nil
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tlsMode = tlsMode
        self.rootCertificatePath = rootCertificatePath
    }

    /// The TLS mode in force: the URL's, or the default.
    package var effectiveTLSMode: PostgresTLSMode { tlsMode ?? .default }

    /// The location with what the URL leaves out taken from libpq's environment variables, as `psql` would:
    /// `PGPASSWORD`, `PGSSLMODE`, `PGSSLROOTCERT`.
    package func filledIn(from environment: [String: String]) throws(ConfigurationError) -> PostgresLocation {
        var location = self
        if location.password == nil { location.password = environment["PGPASSWORD"] }
        if location.tlsMode == nil, let mode = environment["PGSSLMODE"], !mode.isEmpty {
            location.tlsMode = try PostgresTLSMode.parse(mode, source: "PGSSLMODE")
        }
        if location.rootCertificatePath == nil, let path = environment["PGSSLROOTCERT"], !path.isEmpty {
            location.rootCertificatePath = path
        }
        return location
    }

    static func parse(_ text: String) throws(ConfigurationError) -> PostgresLocation {
        let problem = ConfigurationError(
            "--database \(text.replacingPassword()): expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        guard let schemeEnd = text.range(of: "://") else { throw problem }
        let rest = text[schemeEnd.upperBound...]
        guard let at = rest.lastIndex(of: "@") else { throw problem }
        let credentials = rest[..<at]
        var address = rest[rest.index(after: at)...]
        var parameters: Substring = ""
        if let query = address.firstIndex(of: "?") {
            parameters = address[address.index(after: query)...]
            address = address[..<query]
        }
        guard let slash = address.firstIndex(of: "/") else { throw problem }
        let database = String(address[address.index(after: slash)...])
        let hostPort = address[..<slash]
        var host = String(hostPort)
        var port = 5432
        if let colon = hostPort.lastIndex(of: ":"), !hostPort.hasSuffix("]") {
            host = String(hostPort[..<colon])
            guard let parsed = Int(hostPort[hostPort.index(after: colon)...]), (1...65535).contains(parsed) else {
                throw problem
            }
            port = parsed
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let userParts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard !host.isEmpty, !database.isEmpty, let user = userParts.first, !user.isEmpty else { throw problem }
        let password = userParts.count > 1 ? (try? QueryString.decode(userParts[1])) : nil
        var location = PostgresLocation(
            host: host, port: port, username: (try? QueryString.decode(user)) ?? String(user),
            password: password, database: database)
        try location.apply(parameters: parameters, url: text.replacingPassword())
        return location
    }

    /// The URL's query parameters: `sslmode` and `sslrootcert`. Any other is refused by name rather than ignored,
    /// so that a misspelt `sslmode` cannot leave a connection unencrypted.
    private mutating func apply(parameters: Substring, url: String) throws(ConfigurationError) {
        for parameter in parameters.split(separator: "&") {
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard parts.count == 2, let value = try? QueryString.decode(parts[1]), !value.isEmpty else {
                throw ConfigurationError("--database \(url): the parameter '\(name)' needs a value, as in \(name)=…")
            }
            switch name {
            case "sslmode": tlsMode = try PostgresTLSMode.parse(value, source: "--database \(url)")
            case "sslrootcert": rootCertificatePath = value
            default:
                throw ConfigurationError("--database \(url): unknown parameter '\(name)' (known: sslmode, sslrootcert)")
            }
        }
    }
}

extension String {
    /// The URL with any password replaced by `***`, for messages.
    func replacingPassword() -> String {
        guard let schemeEnd = range(of: "://"), let at = self[schemeEnd.upperBound...].lastIndex(of: "@") else {
            return self
        }
        let credentials = self[schemeEnd.upperBound..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return self }
        return String(self[..<colon]) + ":***" + String(self[at...])
    }
}

extension DatabaseLocation {
    /// Refuses a SQLite path whose folder does not exist, naming both: SQLite itself says only `unable to open
    /// database file`.
    static func checkFolder(ofSQLitePath path: String) throws(ConfigurationError) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw ConfigurationError(
                "the folder \(folder) of the SQLite database \(path) does not exist; create it, or give another path")
        }
    }
}
