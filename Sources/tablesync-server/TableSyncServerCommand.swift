import ArgumentParser
import CBuildStamp
import Foundation
import Logging
import SyncProtocol
import TableSyncServer

/// `tablesync-server`: serves tables over the Azure Mobile Apps table protocol (v2 and v3).
@main
struct TableSyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tablesync-server",
        abstract: "Serve tables over the Azure Mobile Apps table protocol (v2 and v3), on SQLite or PostgreSQL.",
        discussion: """
            Tokens come from --tokens-file FILE (one per line) or the environment variable TABLESYNC_SERVER_TOKENS \
            (comma- or space-separated), never from a flag; a line TOKEN NAME names its token for the log and per-user \
            tables. JWTs are checked with --jwt-jwks or --jwt-hs256-key-file, --jwt-issuer and --jwt-audience. Without \
            tokens or JWT keys the server listens on loopback only.
            Stop it with SIGINT or SIGTERM; it finishes the requests in flight first.
            With no --database it keeps its records in tablesync-server.sqlite in the working directory; with no \
            --table it serves TodoItem, the table of the Azure Mobile Apps quickstart. The log says both.
            Example: tablesync-server --database sqlite:server.sqlite --table todo --table notes:softDelete=false \
            --table 'tasks:columns=text:string;done:boolean;due:date;rank:number'
            """,
        version: TableSyncVersion.line(
            stampedVersion: String(cString: tablesync_build_version()),
            commit: String(cString: tablesync_build_commit())))

    @Option(help: "The address to listen on (loopback unless tokens are configured).")
    var host: String?

    @Option(help: "The TCP port to listen on (default 8080; 0 picks a free port).")
    var port: Int?

    @Option(
        help:
            """
            sqlite:PATH or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE&sslrootcert=FILE] (or \
            TABLESYNC_SERVER_DATABASE; the password, sslmode and sslrootcert also from PGPASSWORD, PGSSLMODE and \
            PGSSLROOTCERT). sslmode: disable, prefer (default), require, verify-ca, verify-full; verify-* trust the \
            system's certificate authorities unless sslrootcert names a PEM file. Default: \
            sqlite:tablesync-server.sqlite in the working directory.
            """
    )
    var database: String?

    @Option(
        name: .customLong("table"),
        help: ArgumentHelp(
            """
            A table to serve, repeatable: NAME or NAME:option=value,… with softDelete=true|false, pageSize=N, \
            maxTop=N, columns=name:type;… (types string, number, boolean, date, dateonly) to accept only those \
            properties, read= and write= anonymous|authenticated|role:NAME|disabled, and perUser=true to keep each \
            user to their own records.
            """,
            valueName: "NAME[:OPTIONS]"))
    var tables: [String] = []

    @Option(
        name: .customLong("tokens-file"), help: "A file with the accepted tokens, one per line: TOKEN or TOKEN NAME.")
    var tokensFile: String?

    @OptionGroup(title: "JSON Web Tokens")
    var jwtOptions: JWTOptions

    @Option(
        name: .customLong("max-body-size"),
        help: "The largest request body in bytes, after gzip decompression (default 16 MiB).")
    var maxBodySize: Int?

    @Option(
        name: .customLong("max-page-bytes"),
        help:
            """
            The most bytes the records of one page may take; a page ends before the record that would pass it, with a \
            link to the next (default 8 MiB).
            """
    )
    var maxPageBytes: Int?

    @Option(
        name: .customLong("max-bulk-reads"),
        help:
            """
            The most bulk reads (pages of more than 100 records, $filters that call functions) running at once; the \
            others wait their turn, at most --statement-timeout, then 503 (default: half the cores, at least 1).
            """
    )
    var maxBulkReads: Int?

    @Option(
        name: .customLong("bulk-read-priority"),
        help: "The processor priority of bulk reads on SQLite (default idle).")
    var bulkReadPriority: BulkReadPriority?

    @Flag(
        name: .customLong("no-batch"),
        help: "Do not offer the batch endpoint (POST /batch); clients then send one request per operation.")
    var noBatch = false

    @Option(
        name: .customLong("max-batch-operations"),
        help: "The most operations one batch request may carry (default 1000).")
    var maxBatchOperations: Int?

    @Option(
        name: .customLong("postgres-pool-size"),
        help:
            """
            The most connections to PostgreSQL this process opens at once (default 20); several instances on one \
            database need their sum under its max_connections.
            """
    )
    var postgresPoolSize: Int?

    @Option(
        name: .customLong("header-timeout"),
        help:
            """
            Seconds a client may take to send a request's line and headers, from their first byte; then 408 and the \
            connection is closed (default 10).
            """
    )
    var headerTimeout: Double?

    @Option(
        name: .customLong("body-timeout"),
        help:
            """
            Seconds a client may take to send a request's body after its headers; then 408 and the connection is \
            closed (default 60).
            """
    )
    var bodyTimeout: Double?

    @Option(
        name: .customLong("idle-timeout"),
        help: "Seconds a kept-alive connection may wait for its next request before it is closed (default 60).")
    var idleTimeout: Double?

    @Option(
        name: .customLong("max-connections"),
        help: "The most client connections open at once; more wait until one closes (default 1000).")
    var maxConnections: Int?

    @Option(
        name: .customLong("statement-timeout"),
        help:
            """
            Seconds a page read may run; then it is cancelled and the request answered 503 (default 30). Writes wait \
            for their tables' locks unlimited.
            """
    )
    var statementTimeout: Double?

    @Option(
        name: .customLong("shutdown-timeout"),
        help: "Seconds a stopping server waits for the requests in flight before it cancels them (default 5).")
    var shutdownTimeout: Double?

    @Option(
        name: .customLong("database-wait"),
        help:
            """
            Seconds a starting server waits for a PostgreSQL database that cannot be reached yet, trying again with \
            backoff (default 30; 0: not at all).
            """
    )
    var databaseWait: Double?

    @Option(
        name: .customLong("max-change-wait"),
        help: """
            The most whole seconds a change feed request (GET /changes) waits for a change before it is answered 304 \
            (default 30; never more than half --idle-timeout).
            """)
    var maxChangeWait: Int?

    @Option(name: .customLong("max-filter-depth"), help: "The deepest nesting of a $filter's expression (default 32).")
    var maxFilterDepth: Int?

    @Option(
        name: .customLong("max-filter-terms"),
        help: "The most terms in a $filter: properties, literals, operators, functions, in-list items (default 500).")
    var maxFilterTerms: Int?

    @Option(
        name: .customLong("max-filter-growth"),
        help:
            """
            The most times longer than what it reads a $filter's string functions may make a string (nested replace() \
            calls multiply; default 16).
            """
    )
    var maxFilterGrowth: Int?

    @Option(help: "A JSON configuration file; flags win over it.")
    var config: String?

    @Option(
        name: .customLong("log-level"),
        help: "trace, debug, info, notice, warning, error or critical (in any case); another word is refused.")
    var logLevel: String = "info"

    /// Parses and runs the command line; bad usage (an unknown flag, a value it does not take) exits 2, as every
    /// other refusal of the configuration does, where the argument parser's own code is 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                exit(withError: ExitCode(2))
            }
            exit(withError: error)
        }
    }

    func validate() throws {
        guard Logger.Level(rawValue: logLevel.lowercased()) != nil else {
            throw ValidationError(
                """
                --log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")); found \
                "\(logLevel)"
                """)
        }
    }

    func run() async throws {
        var logger = Logger(label: "tablesync-server")
        logger.logLevel = Logger.Level(rawValue: logLevel.lowercased()) ?? .info
        ServerHeapPolicy.apply()
        do {
            let configuration = try makeConfiguration(logger: logger)
            let app = try makeServerApplication(configuration: configuration, logger: logger)
            try await runServer(app, configuration: configuration, logger: logger)
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("tablesync-server: \(error.message)\n".utf8))
            throw ExitCode(2)
        }
    }

    /// The database when none is configured: an embedded SQLite file in the working directory.
    static let defaultDatabase = "sqlite:tablesync-server.sqlite"
    /// The table served when none is configured: the Azure Mobile Apps quickstart's.
    static let defaultTable = "TodoItem"

    private func makeConfiguration(logger: Logger) throws -> ServerConfiguration {
        let environment = ProcessInfo.processInfo.environment
        var file = ServerConfigurationFile()
        if let config {
            guard let data = FileManager.default.contents(atPath: config),
                let text = String(data: data, encoding: .utf8)
            else {
                throw ConfigurationError("cannot read the configuration file \(config)")
            }
            file = try ServerConfigurationFile.parse(text, path: config)
        }
        let configuredDatabase = database ?? environment["TABLESYNC_SERVER_DATABASE"] ?? file.database
        if configuredDatabase == nil {
            logger.notice(
                "no --database given: keeping the records in SQLite",
                metadata: [
                    "file":
                        "\(FileManager.default.currentDirectoryPath)/\(Self.defaultDatabase.dropFirst("sqlite:".count))"
                ])
        }
        let databaseText = configuredDatabase ?? Self.defaultDatabase
        var location = try DatabaseLocation.parse(databaseText)
        if case .postgres(let postgres) = location {
            location = .postgres(try postgres.filledIn(from: environment))
        }
        var tableOptions = file.tables
        for text in tables {
            let options = try TableOptions.parse(text)
            tableOptions.removeAll { $0.name.lowercased() == options.name.lowercased() }
            tableOptions.append(options)
        }
        if tableOptions.isEmpty {
            logger.notice(
                "no --table given: serving the quickstart's table", metadata: ["table": "\(Self.defaultTable)"])
            tableOptions = [TableOptions(name: Self.defaultTable)]
        }
        var tokens: [StaticToken] = []
        if let tokensFile = tokensFile ?? file.tokensFile {
            tokens = try TokenList.load(file: tokensFile)
        } else if let value = environment[TokenList.environmentVariable] {
            tokens = TokenList.parse(environmentValue: value)
        }
        var configuration = ServerConfiguration(
            host: host ?? file.host ?? "127.0.0.1", port: port ?? file.port ?? 8080, database: location,
            tables: tableOptions, tokens: tokens,
            maxBodySize: maxBodySize ?? file.maxBodySize ?? ServerConfiguration.defaultMaxBodySize,
            batch: noBatch ? false : file.batch ?? true,
            maxBatchOperations: maxBatchOperations ?? file.maxBatchOperations
                ?? ServerConfiguration.defaultMaxBatchOperations,
            postgresPoolSize: postgresPoolSize ?? file.postgresPoolSize ?? ServerConfiguration.defaultPostgresPoolSize)
        let timeLimits: [(flag: String, seconds: Double?, setting: WritableKeyPath<ServerConfiguration, Duration>)] = [
            ("--header-timeout", headerTimeout ?? file.headerTimeout, \.headerTimeout),
            ("--body-timeout", bodyTimeout ?? file.bodyTimeout, \.bodyTimeout),
            ("--idle-timeout", idleTimeout ?? file.idleTimeout, \.idleTimeout),
            ("--statement-timeout", statementTimeout ?? file.statementTimeout, \.statementTimeout),
            ("--shutdown-timeout", shutdownTimeout ?? file.shutdownTimeout, \.shutdownTimeout)
        ]
        for limit in timeLimits {
            if let seconds = limit.seconds {
                configuration[keyPath: limit.setting] = try ServerConfiguration.timeLimit(
                    seconds: seconds, setting: limit.flag)
            }
        }
        configuration.jwt = try jwtOptions.settings(file: file.jwt, environment: environment)
        if let bytes = maxPageBytes ?? file.maxPageBytes { configuration.maxPageBytes = bytes }
        if let reads = maxBulkReads ?? file.maxBulkReads { configuration.maxBulkReads = reads }
        if let priority = bulkReadPriority ?? file.bulkReadPriority { configuration.bulkReadPriority = priority }
        if let count = maxConnections ?? file.maxConnections { configuration.maxConnections = count }
        if let depth = maxFilterDepth ?? file.maxFilterDepth { configuration.filterLimits.maxDepth = depth }
        if let terms = maxFilterTerms ?? file.maxFilterTerms { configuration.filterLimits.maxTerms = terms }
        if let growth = maxFilterGrowth ?? file.maxFilterGrowth { configuration.filterLimits.maxGrowth = growth }
        if let seconds = maxChangeWait ?? file.maxChangeWait { configuration.maxChangeWait = seconds }
        if let seconds = databaseWait ?? file.databaseWait {
            guard (0...86_400).contains(seconds) else {
                throw ConfigurationError("--database-wait must be from 0 to 86400 seconds, not \(seconds)")
            }
            configuration.databaseWait = .seconds(seconds)
        }
        return configuration
    }
}
