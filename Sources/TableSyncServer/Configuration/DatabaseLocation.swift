import Foundation

/// Where the server keeps its records: `sqlite:PATH` or `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`.
public enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    /// A SQLite file (created when missing).
    case sqlite(path: String)
    /// A PostgreSQL database over TCP, without TLS (loopback or a trusted network).
    case postgres(PostgresLocation)

    /// Parses the text form given to `--database`.
    public static func parse(_ text: String) throws(ConfigurationError) -> DatabaseLocation {
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else { throw ConfigurationError("--database sqlite: needs a file path, as in sqlite:server.sqlite") }
            return .sqlite(path: path)
        }
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            return .postgres(try PostgresLocation.parse(text))
        }
        throw ConfigurationError("--database must be sqlite:PATH or postgres://USER@HOST[:PORT]/DATABASE, not '\(text)'")
    }

    /// The location without its password, for logs.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let location): return "postgres://\(location.username)@\(location.host):\(location.port)/\(location.database)"
        }
    }
}

/// The parts of a `postgres://` URL.
public struct PostgresLocation: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var username: String
    /// From the URL, or from the `PGPASSWORD` environment variable when the URL has none.
    public var password: String?
    public var database: String

    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
    }

    static func parse(_ text: String) throws(ConfigurationError) -> PostgresLocation {
        let problem = ConfigurationError("--database \(text.replacingPassword()): expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
        guard let schemeEnd = text.range(of: "://") else { throw problem }
        let rest = text[schemeEnd.upperBound...]
        guard let at = rest.lastIndex(of: "@") else { throw problem }
        let credentials = rest[..<at]
        var address = rest[rest.index(after: at)...]
        if let query = address.firstIndex(of: "?") { address = address[..<query] }
        guard let slash = address.firstIndex(of: "/") else { throw problem }
        let database = String(address[address.index(after: slash)...])
        let hostPort = address[..<slash]
        var host = String(hostPort)
        var port = 5432
        if let colon = hostPort.lastIndex(of: ":"), !hostPort.hasSuffix("]") {
            host = String(hostPort[..<colon])
            guard let parsed = Int(hostPort[hostPort.index(after: colon)...]), (1...65535).contains(parsed) else { throw problem }
            port = parsed
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let userParts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard !host.isEmpty, !database.isEmpty, let user = userParts.first, !user.isEmpty else { throw problem }
        let password = userParts.count > 1 ? (try? QueryString.decode(userParts[1])) : nil
        return PostgresLocation(host: host, port: port, username: (try? QueryString.decode(user)) ?? String(user),
                                password: password, database: database)
    }
}

extension String {
    /// The URL with any password replaced by `***`, for messages.
    func replacingPassword() -> String {
        guard let schemeEnd = range(of: "://"), let at = self[schemeEnd.upperBound...].lastIndex(of: "@") else { return self }
        let credentials = self[schemeEnd.upperBound..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return self }
        return String(self[..<colon]) + ":***" + String(self[at...])
    }
}
