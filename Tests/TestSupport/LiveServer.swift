import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import ServiceLifecycle
import TableSyncServer

/// `tablesync-server` running in this process on a loopback port of its own, reached over a real socket.
public final class LiveServer: Sendable {
    /// `http://127.0.0.1:PORT`, or `https://localhost:PORT` for a server started with TLS.
    public let baseURL: String
    /// The database it serves from.
    public let database: DatabaseLocation
    private let running: RunningApplication

    private init(baseURL: String, database: DatabaseLocation, running: RunningApplication) {
        self.baseURL = baseURL
        self.database = database
        self.running = running
    }

    /// Starts a server on `backend` serving `tables`.
    /// `port` 0 picks a free one; give the old port to restart a stopped server where clients expect it.
    /// `configure` adjusts the rest of the configuration (e.g. `batch = false` for a server without the extension).
    /// With `tls` it serves HTTPS, as a server behind a TLS-terminating proxy looks to clients.
    public static func start(
        _ backend: TestBackend, tables: [String], tokens: [StaticToken] = [],
        database: DatabaseLocation? = nil, port: Int = 0, tls: TLSConfiguration? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> LiveServer {
        let database = try database ?? backend.database()
        var logger = Logger(label: "tablesync-test-server")
        logger.logLevel = .warning
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: port, database: database,
            tables: tables.map { TableOptions(name: $0) }, tokens: tokens)
        configure(&configuration)
        let running = try await RunningApplication.start { onServerRunning in
            try makeServerApplication(
                configuration: configuration, logger: logger, onServerRunning: onServerRunning,
                server: try tls.map { try .tls(tlsConfiguration: $0) })
        }
        let baseURL = tls == nil ? "http://127.0.0.1:\(running.port)" : "https://localhost:\(running.port)"
        return LiveServer(baseURL: baseURL, database: database, running: running)
    }

    /// The port it listens on.
    public var port: Int { Int(baseURL.split(separator: ":").last!)! }

    /// Stops the server and waits until it has.
    public func stop() async {
        await running.stop()
    }
}

/// A Hummingbird application running in this process on a free loopback port, on threads of its own
/// (``ServerExecutor``: clients in this process block the shared pool's threads), until ``stop()``.
///
/// It stops by graceful shutdown, never by cancelling its task: a connection accepted just as the serving task is
/// cancelled is never handed to the server, and swift-nio traps when it is dropped ("Deinited NIOAsyncWriter
/// without calling finish()", apple/swift-nio#3481), which ends the whole test process.
final class RunningApplication: Sendable {
    /// The port it listens on.
    let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.group = group
        self.task = task
    }

    /// Runs the application `make` builds, handing it the callback that learns the listening channel; returns
    /// once it listens.
    static func start<App: ApplicationProtocol>(
        _ make: (@escaping @Sendable (any Channel) async -> Void) throws -> App
    ) async throws -> RunningApplication {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = try make { channel in continuation.yield(channel.localAddress?.port ?? 0) }
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: app.logger))
        let task = Task(executorPreference: ServerExecutor.shared) {
            defer { continuation.finish() }
            try await group.run()
        }
        let running = RunningApplication(port: 0, group: group, task: task)
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            await running.stop()
            if case .failure(let error) = await task.result {
                throw ConfigurationError("the test server did not start: \(error)")
            }
            throw ConfigurationError("the test server did not start")
        }
        return RunningApplication(port: port, group: group, task: task)
    }

    /// Serves `router` on a free loopback port (the stand-ins and the key set server); returns once it listens.
    static func serving<Context: RequestContext>(
        _ router: Router<Context>, logger: Logger
    ) async throws -> RunningApplication where Context.Source == ApplicationRequestContextSource {
        try await start { onServerRunning in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: onServerRunning, logger: logger)
        }
    }

    /// Stops taking connections, lets the requests in flight finish, and waits until the application has ended.
    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}
