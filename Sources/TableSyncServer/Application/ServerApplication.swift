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
    let database = try ServerDatabase.open(configuration: configuration, logger: logger)
    let notifier = ChangeNotifier()
    let repository = ChangeSignallingRepository(base: database.storage, notifier: notifier)
    let authenticator = Authenticator(tokens: configuration.tokens, jwt: configuration.jwt, logger: logger)
    let router = ServerRoutes(
        configuration: configuration, database: database, repository: repository, notifier: notifier,
        authenticator: authenticator
    ).router()
    let guarded = HTTPServerBuilder.guardedHTTP1(
        ConnectionGuardHandler.Settings(
            headerTimeout: TimeAmount(configuration.headerTimeout), bodyTimeout: TimeAmount(configuration.bodyTimeout),
            idleTimeout: TimeAmount(configuration.idleTimeout), maxBodySize: configuration.maxBodySize,
            extensionsHeader: ProtocolExtension.headerValue(configuration.extensions), metrics: database.metrics))
    var app = Application(
        router: router,
        server: server ?? guarded,
        configuration: .init(
            address: .hostname(configuration.host, port: configuration.port), serverName: "tablesync-server",
            availableConnectionsDelegate: .maximum(configuration.maxConnections, logger: logger)),
        onServerRunning: onServerRunning,
        logger: logger)
    if let postgres = database.postgres {
        app.addServices(
            postgres.pools,
            PostgresAvailabilityProbe(
                location: postgres.location, availability: database.availability, pools: postgres.pools,
                logger: logger),
            PostgresChangeListener(
                location: postgres.location, tables: configuration.tables.map(\.name),
                notifier: notifier, availability: database.availability, logger: logger))
    }
    app.beforeServerStarts {
        try await ServerStart.prepare(
            configuration: configuration, database: database, repository: repository, authenticator: authenticator,
            logger: logger)
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
