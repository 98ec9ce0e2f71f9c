import Foundation
import Logging
import SyncProtocol

/// Everything `tablesync-server` needs to run, in one value: ``makeServerApplication(configuration:logger:)``
/// builds the same server from it for the executable, the tests and `make demo`.
public struct ServerConfiguration: Sendable {
    /// The address to listen on. Without tokens or JWT keys it must be a loopback address.
    public var host: String
    /// The TCP port; 0 picks a free one (tests).
    public var port: Int
    /// Where records live.
    public var database: DatabaseLocation
    /// The tables served.
    public var tables: [TableOptions]
    /// The accepted static tokens (``TokenList``); with no ``jwt`` either, the server checks no credentials
    /// (loopback only).
    public var tokens: [StaticToken]
    /// How JSON Web Tokens are checked; `nil` accepts none.
    public var jwt: JWTSettings?
    /// The largest request body accepted, after gzip decompression, in bytes (413 above it).
    public var maxBodySize: Int
    /// Response bodies at least this large are gzip-compressed when the client accepts gzip.
    public var gzipMinimumSize: Int
    /// Offer the batch extension (`POST /batch`); `false` makes the server look like one without it.
    public var batch: Bool
    /// The most operations one batch may carry (413 above it); its bytes are bounded by ``maxBodySize``.
    public var maxBatchOperations: Int
    /// The most connections the server opens to PostgreSQL at once (unused on SQLite).
    public var postgresPoolSize: Int
    /// The longest a client may take to send a request's line and headers, from their first byte; then 408 and
    /// the connection is closed.
    public var headerTimeout: Duration = defaultHeaderTimeout
    /// The longest a client may take to send a request's body, from the end of its headers; then 408 and the
    /// connection is closed.
    public var bodyTimeout: Duration = defaultBodyTimeout
    /// How long a kept-alive connection may wait for its next request before the server closes it.
    public var idleTimeout: Duration = defaultIdleTimeout
    /// The most client connections open at once; more wait in the listen backlog until one closes.
    public var maxConnections: Int = defaultMaxConnections
    /// The most a `$filter` may ask of the database; more is a 400 before it runs.
    public var filterLimits = FilterLimits()
    /// The most bytes the records of one page may take as sent; a page ends before the record that would pass it
    /// (but always holds at least one record), with a link to the next page.
    public var maxPageBytes: Int = defaultMaxPageBytes
    /// The most bulk reads (reads of more than 100 records, `$filter`s that call functions, orders no index gives)
    /// running at once; the others wait their turn, at most ``statementTimeout``, so that small requests are not
    /// crowded out.
    public var maxBulkReads: Int = defaultMaxBulkReads
    /// The processor priority of bulk reads on SQLite: by default they yield to every other thread.
    public var bulkReadPriority: BulkReadPriority = .default
    /// The longest a page read may run; then it is cancelled and the request answered 503. Writes are not limited:
    /// they queue behind other writers for their tables' write locks.
    public var statementTimeout: Duration = defaultStatementTimeout
    /// How long a stopping server (SIGTERM, SIGINT) waits for the requests in flight before it cancels them.
    public var shutdownTimeout: Duration = defaultShutdownTimeout
    /// How long a starting server waits for a PostgreSQL database that cannot be reached yet (refused, starting up),
    /// trying again with backoff; zero: not at all. A database that refuses the server's credentials or TLS stops
    /// the start at once.
    public var databaseWait: Duration = defaultDatabaseWait
    /// The longest, in whole seconds, a change feed request waits for a change before it is answered 304
    /// (``ChangeFeed``); a request asks for less with `wait`. The wait applied is at most half the
    /// ``idleTimeout`` (``changeWaitLimitSeconds``).
    public var maxChangeWait: Int = defaultMaxChangeWait

    /// The default of ``host``: loopback, which a server without credentials must keep to.
    public static let defaultHost = "127.0.0.1"
    /// The default of ``port``.
    public static let defaultPort = 8080
    /// The default of ``maxBodySize``: 16 MiB.
    public static let defaultMaxBodySize = 16 * 1024 * 1024
    /// The largest ``maxBodySize`` accepted: 32 MiB. PostgreSQL's `jsonb` holds at most 256 MiB, and its binary form
    /// can take several times the bytes of the JSON text (an array of small numbers about six), so a larger body
    /// could be stored by SQLite and refused by PostgreSQL.
    package static let largestMaxBodySize = 32 * 1024 * 1024
    /// The default of ``maxPageBytes``: 8 MiB, many pages of ordinary records, and a bound on the memory of each
    /// answer in flight.
    package static let defaultMaxPageBytes = 8 * 1024 * 1024
    /// The largest ``maxPageBytes`` accepted: 128 MiB, with room for one record past it under the 256 MiB that
    /// TableSync's client accepts in an answer.
    package static let largestMaxPageBytes = 128 * 1024 * 1024
    /// The default of ``maxBulkReads``: half the processor cores, at least one, leaving the rest to small requests.
    package static let defaultMaxBulkReads = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)
    /// The default of ``gzipMinimumSize``: 1 KiB.
    public static let defaultGzipMinimumSize = 1024
    /// The default of ``maxBatchOperations``: 1,000.
    public static let defaultMaxBatchOperations = 1000
    /// The default of ``headerTimeout``: 10 s.
    package static let defaultHeaderTimeout = Duration.seconds(10)
    /// The default of ``bodyTimeout``: 60 s, 16 MiB at about 280 KB/s.
    package static let defaultBodyTimeout = Duration.seconds(60)
    /// The default of ``idleTimeout``: 60 s.
    package static let defaultIdleTimeout = Duration.seconds(60)
    /// The default of ``maxConnections``: 1,000.
    package static let defaultMaxConnections = 1000
    /// The default of ``statementTimeout``: 30 s.
    package static let defaultStatementTimeout = Duration.seconds(30)
    /// The default of ``shutdownTimeout``: 5 s; cancelling what is left then takes at most ``cancellationTimeout``.
    package static let defaultShutdownTimeout = Duration.seconds(5)
    /// The default of ``databaseWait``: 30 s, long enough for a PostgreSQL on the same machine to start with it.
    package static let defaultDatabaseWait = Duration.seconds(30)
    /// How long a stopping server gives cancelled requests to end before it exits regardless.
    package static let cancellationTimeout = Duration.seconds(2)
    /// The longest time limit a setting takes: a day.
    package static let longestTimeout = Duration.seconds(86_400)
    /// The default of ``maxChangeWait``: 30 s, half the default idle timeout, so a client or proxy in front that closes
    /// connections idle as long as the server does never closes one waiting for a change.
    package static let defaultMaxChangeWait = 30
    /// The largest ``maxChangeWait`` accepted: an hour.
    package static let largestMaxChangeWait = 3600
    /// The default of ``postgresPoolSize``: 20, PostgresNIO's own default, well under PostgreSQL's usual
    /// `max_connections` of 100.
    public static let defaultPostgresPoolSize = 20

    /// A configuration serving `tables` from `database`; every setting not given has its default (docs/server.md,
    /// "Configuration file").
    public init(
        host: String = defaultHost, port: Int = defaultPort, database: DatabaseLocation, tables: [TableOptions],
        tokens: [StaticToken] = [], maxBodySize: Int = defaultMaxBodySize,
        gzipMinimumSize: Int = defaultGzipMinimumSize,
        batch: Bool = true, maxBatchOperations: Int = defaultMaxBatchOperations,
        postgresPoolSize: Int = defaultPostgresPoolSize
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.tables = tables
        self.tokens = tokens
        self.maxBodySize = maxBodySize
        self.gzipMinimumSize = gzipMinimumSize
        self.batch = batch
        self.maxBatchOperations = maxBatchOperations
        self.postgresPoolSize = postgresPoolSize
    }

    /// Checks the rules a server starts only with: at least one table, unique table names, each setting in its
    /// range (``ServerSetting``), authentication whenever the address is not loopback, and access rules the
    /// credentials can meet (``validateAccess()``).
    public func validate() throws(ConfigurationError) {
        guard !tables.isEmpty else {
            throw ConfigurationError("no tables to serve; add --table NAME (repeat it for more tables)")
        }
        var seen: Set<String> = []
        for table in tables where !seen.insert(table.name.lowercased()).inserted {
            throw ConfigurationError("the table '\(table.name)' is given twice (table names ignore case)")
        }
        for setting in ServerSetting.all {
            if let refusal = setting.check(self) { throw refusal }
        }
        if !checksCredentials && !Self.isLoopback(host) {
            throw ConfigurationError(
                """
                refusing to listen on \(host) without authentication: give tokens with --tokens-file FILE or \
                TABLESYNC_SERVER_TOKENS, JWT keys with --jwt-jwks or --jwt-hs256-key-file, or listen on 127.0.0.1
                """
            )
        }
        try jwt?.validate()
        try validateAccess()
    }

    /// Whether the server checks credentials: it has static tokens or JWT keys.
    package var checksCredentials: Bool { !tokens.isEmpty || jwt != nil }

    /// Checks that every table's access rules can be met: `authenticated` and roles need credentials to check, a
    /// per-user table needs a user for each request (not `anonymous`) and no declared columns.
    func validateAccess() throws(ConfigurationError) {
        for table in tables {
            for (name, access) in [("read", table.read), ("write", table.write)] {
                if access?.needsCredentials == true && !checksCredentials {
                    throw ConfigurationError(
                        "table \(table.name): \(name)=\(access!) needs credentials to check: give tokens or JWT keys")
                }
                if table.perUser && access == .anonymous {
                    throw ConfigurationError(
                        "table \(table.name): a per-user table needs a user for every request, not \(name)=anonymous")
                }
            }
            guard table.perUser else { continue }
            guard checksCredentials else {
                throw ConfigurationError(
                    """
                    table \(table.name): perUser needs users: give named tokens (TOKEN NAME in the tokens file) or JWT \
                    keys
                    """
                )
            }
            guard table.schema == nil else {
                throw ConfigurationError(
                    "table \(table.name): perUser and columns cannot be combined; serve the table without columns")
            }
        }
    }

    /// `seconds` as a time limit for `setting` (a flag's name, in messages): more than 0, at most ``longestTimeout``.
    package static func timeLimit(seconds: Double, setting: String) throws(ConfigurationError) -> Duration {
        guard seconds.isFinite, seconds > 0, seconds <= Double(longestTimeout.components.seconds) else {
            throw timeLimitError(setting: setting, value: "\(seconds)")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    static func timeLimitError(setting: String, value: String) -> ConfigurationError {
        ConfigurationError(
            "\(setting) must be more than 0 and at most \(longestTimeout.components.seconds) seconds, not \(value)")
    }

    /// The extensions this server offers, advertised on every response and in `/health`.
    package var extensions: Set<ProtocolExtension> {
        batch
            ? [.gzipRequests, .batch, .batchMinimalAnswers, .changes, .wholePages]
            : [.gzipRequests, .changes, .wholePages]
    }

    /// The longest a change feed request waits, in whole seconds: ``maxChangeWait``, but never more than half the
    /// ``idleTimeout`` (at least one second), so the wait stays well inside the idle time limits of the way there.
    package var changeWaitLimitSeconds: Int {
        let halfIdle = Int(idleTimeout.components.seconds / 2)
        return max(1, min(maxChangeWait, halfIdle))
    }

    /// The batch limits announced in `/health`, or `nil` when the batch extension is off.
    package var batchLimits: BatchLimits? {
        batch ? BatchLimits(maxOperations: maxBatchOperations, maxBytes: maxBodySize) : nil
    }

    /// `true` for `localhost`, `127.0.0.0/8` and `::1`.
    package static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}

extension ServerConfiguration {
    /// How requests are authenticated, as the start's log line says it (names and locations, never a secret).
    var authenticationSummary: String {
        var parts: [String] = []
        if !tokens.isEmpty { parts.append("\(tokens.count) static token(s)") }
        if let jwt {
            var kinds: [String] = []
            if jwt.sharedKey != nil { kinds.append("HS256") }
            if let keySet = jwt.keySet { kinds.append("RS256/ES256 from \(keySet)") }
            parts.append("JWT \(kinds.joined(separator: " and ")) for issuer \(jwt.issuer), audience \(jwt.audience)")
        }
        return parts.isEmpty ? "none (loopback only)" : parts.joined(separator: "; ")
    }
}
