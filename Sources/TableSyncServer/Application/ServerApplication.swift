import Foundation
import GRDB
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import SyncProtocol

/// Builds the server from `configuration`: the one way the executable, the tests and `make demo` make it.
///
/// The database schema is created before the server starts listening; a PostgreSQL connection pool runs as a
/// service of the application and stops with it (SIGTERM and SIGINT shut the whole application down gracefully
/// when it runs with `runService()`).
///
/// ```swift
/// let configuration = ServerConfiguration(
///     database: .sqlite(path: "server.sqlite"), tables: [TableOptions(name: "todo")])
/// let application = try makeServerApplication(configuration: configuration, logger: Logger(label: "tablesync-server"))
/// try await application.runService()
/// ```
/// `onServerRunning` learns the listening channel (its local address tells the port when `port` is 0). `server`
/// says how connections are served: `nil` for plain HTTP/1.1 with the configuration's deadlines and limits, as
/// `tablesync-server` serves (TLS belongs to a reverse proxy in front, docs/deploy.md), or e.g.
/// `.tls(tlsConfiguration:)` of HummingbirdTLS for a program that embeds the server and brings its own.
public func makeServerApplication(
    configuration: ServerConfiguration, logger: Logger,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
    server: HTTPServerBuilder? = nil
) throws -> Application<RouterResponder<TableRequestContext>> {
    try configuration.validate()
    let metrics: ServerMetrics
    let storage: any RecordRepository
    let notifier = ChangeNotifier()
    let availability: DatabaseAvailability
    var postgres: (location: PostgresLocation, pools: PostgresPools)?
    switch configuration.database {
    case .sqlite(let path):
        try DatabaseLocation.checkFolder(ofSQLitePath: path)
        metrics = ServerMetrics()
        availability = DatabaseAvailability(
            database: "\(configuration.database)", publicName: "the server's SQLite database", logger: logger,
            gauge: metrics.databaseUp)
        do {
            storage = try SQLiteRecordRepository(
                path: path, statementTimeout: configuration.statementTimeout,
                bulkReadPriority: configuration.bulkReadPriority, metrics: metrics)
        } catch let error as DatabaseError where error.resultCode.primaryResultCode == .SQLITE_CANTOPEN {
            throw ConfigurationError(
                """
                cannot open the SQLite database \(path) (\(error.message ?? "unable to open")); it must be a file the \
                server's user may read and write, in a folder it may write
                """)
        }
    case .postgres(let location):
        // The pool reports every failed connection attempt at info; the availability's lines say it once.
        var poolLogger = logger
        if poolLogger.logLevel == .info { poolLogger.logLevel = .notice }
        let pools = PostgresPools(
            configuration: try location.clientConfiguration(
                poolSize: configuration.postgresPoolSize,
                statementTimeout: configuration.statementTimeout),
            logger: poolLogger)
        postgres = (location, pools)
        metrics = ServerMetrics(databasePoolSize: configuration.postgresPoolSize)
        availability = DatabaseAvailability(
            database: "\(configuration.database)",
            publicName: "the server's PostgreSQL database \"\(location.database)\"", logger: logger,
            gauge: metrics.databaseUp)
        storage = try PostgresRecordRepository(
            pools: pools, logger: logger, statementTimeout: configuration.statementTimeout, location: location,
            poolSize: configuration.postgresPoolSize, metrics: metrics)
    }

    let repository = ChangeSignallingRepository(base: storage, notifier: notifier)
    let writer = ResponseWriter(gzipMinimumSize: configuration.gzipMinimumSize)
    let router = Router(context: TableRequestContext.self)
    let extensions = configuration.extensions
    router.add(middleware: RequestObservationMiddleware(metrics: metrics))
    router.add(middleware: ProtocolResponseMiddleware(extensions: extensions, writer: writer))
    var health: [String: JSONValue] = [
        "status": "ok",
        "versions": .array(ProtocolVersion.allCases.map { .string($0.headerValue) }),
        "extensions": .array(ProtocolExtension.allCases.filter(extensions.contains).map { .string($0.rawValue) })
    ]
    if let limits = configuration.batchLimits { health[BatchLimits.healthMember] = limits.json }
    health[ChangeFeedLimits.healthMember] = ChangeFeedLimits(maxWaitSeconds: configuration.changeWaitLimitSeconds).json
    router.get(RouterPath(TablePath.health)) { [health] request, _ in
        writer.json(.object(health), status: .ok, request: request)
    }
    router.get(RouterPath(DatabaseAvailability.readinessPath)) { request, _ -> Response in
        guard availability.isUp else { throw availability.refusal }
        return writer.json(.object(["status": "ready"]), status: .ok, request: request)
    }
    let authenticator = Authenticator(tokens: configuration.tokens, jwt: configuration.jwt, logger: logger)
    router.add(middleware: AuthenticationMiddleware(authenticator: authenticator))
    // Behind credentials when the server checks them, as the tables are: the counts tell of the server's clients.
    router.get(RouterPath(ServerMetrics.path)) { _, context -> Response in
        if authenticator.checksCredentials && context.identity == nil { throw ProtocolError.unauthorized }
        return Response(
            status: .ok, headers: [.contentType: ServerMetrics.contentType],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
    }
    router.add(middleware: DatabaseAvailabilityMiddleware(availability: availability))
    let tableRoutes = TableRoutes(configuration: configuration, repository: repository, metrics: metrics)
    tableRoutes.register(on: router)
    ChangeFeedRoute(
        tables: tableRoutes.tables, repository: repository, notifier: notifier, metrics: metrics,
        writer: writer, checksCredentials: configuration.checksCredentials,
        maxWaitSeconds: configuration.changeWaitLimitSeconds
    ).register(on: router)

    let guarded = HTTPServerBuilder.guardedHTTP1(
        ConnectionGuardHandler.Settings(
            headerTimeout: TimeAmount(configuration.headerTimeout), bodyTimeout: TimeAmount(configuration.bodyTimeout),
            idleTimeout: TimeAmount(configuration.idleTimeout), maxBodySize: configuration.maxBodySize,
            extensionsHeader: ProtocolExtension.headerValue(extensions), metrics: metrics))
    var app = Application(
        router: router,
        server: server ?? guarded,
        configuration: .init(
            address: .hostname(configuration.host, port: configuration.port), serverName: "tablesync-server",
            availableConnectionsDelegate: .maximum(configuration.maxConnections, logger: logger)),
        onServerRunning: onServerRunning,
        logger: logger)
    let tables = configuration.tables
    if let postgres {
        app.addServices(
            postgres.pools,
            PostgresAvailabilityProbe(
                location: postgres.location, availability: availability, pools: postgres.pools, logger: logger),
            PostgresChangeListener(
                location: postgres.location, tables: tables.map(\.name),
                notifier: notifier, availability: availability, logger: logger))
    }
    app.beforeServerStarts { [postgres] in
        if let location = postgres?.location {
            let encrypted = try await location.checkConnection(
                logger: logger, waitingUpTo: configuration.databaseWait)
            logger.info(
                "connected to PostgreSQL",
                metadata: [
                    "sslmode": "\(location.effectiveTLSMode.rawValue)", "encrypted": "\(encrypted)"
                ])
        }
        try await repository.prepare(tables: tables)
        if case .file(let path)? = configuration.jwt?.keySet {
            // A key set URL that is down leaves a warning and is tried again; a file is the operator's to fix.
            let keySet: KeySet
            do {
                keySet = try await KeySet.load(from: .file(path))
            } catch {
                throw ConfigurationError(
                    "the JWKS file \(path) cannot be used (\(error)); give --jwt-jwks a readable JWKS file")
            }
            guard !keySet.algorithms.isEmpty else {
                throw ConfigurationError(
                    """
                    the JWKS file \(path) holds no key this server can check tokens with; it needs signing keys \
                    with a kid, RSA for RS256 or EC P-256 for ES256
                    """)
            }
        }
        await authenticator.prepare()
        availability.arm()
        logger.info(
            "serving tables",
            metadata: [
                "tables": "\(tables.map(\.name).joined(separator: ","))", "database": "\(configuration.database)",
                "auth": "\(configuration.authenticationSummary)"
            ])
    }
    return app
}

/// Runs `app` (made by ``makeServerApplication(configuration:logger:onServerRunning:server:)``) until SIGTERM or
/// SIGINT, then stops it in bounded time under any load: it stops accepting connections, gives the requests in
/// flight ``ServerConfiguration/shutdownTimeout`` to finish, then cancels them (and their database statements), and
/// ends the process at most ``ServerConfiguration/cancellationTimeout`` later, whatever still runs
/// (``ShutdownDeadline``).
public func runServer(_ app: some ApplicationProtocol, configuration: ServerConfiguration, logger: Logger) async throws
{
    let deadline = ShutdownDeadline(
        bound: configuration.shutdownTimeout + ServerConfiguration.cancellationTimeout, logger: logger)
    defer { deadline.disarm() }
    var group = ServiceGroupConfiguration(
        services: [app, ShutdownAnnouncement(logger: logger)], gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger)
    group.maximumGracefulShutdownDuration = configuration.shutdownTimeout
    do {
        try await ServiceGroup(configuration: group).run()
    } catch let error as IOError where error.errnoCode == EADDRINUSE {
        throw ConfigurationError(
            """
            cannot listen on \(configuration.host):\(configuration.port): another program uses the port; stop it, or \
            choose another --port
            """)
    }
    logger.info("stopped")
}
