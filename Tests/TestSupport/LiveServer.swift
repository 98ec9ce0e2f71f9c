import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import TableSyncServer

/// `tablesync-server` running in this process on a loopback port of its own, reached over a real socket.
public final class LiveServer: Sendable {
    /// `http://127.0.0.1:PORT`, or `https://localhost:PORT` for a server started with TLS.
    public let baseURL: String
    /// The database it serves from.
    public let database: DatabaseLocation
    private let task: Task<Void, any Error>

    private init(baseURL: String, database: DatabaseLocation, task: Task<Void, any Error>) {
        self.baseURL = baseURL
        self.database = database
        self.task = task
    }

    /// Starts a server on `backend` serving `tables`.
    /// `port` 0 picks a free one; give the old port to restart a stopped server where clients expect it.
    /// `configure` adjusts the rest of the configuration (e.g. `batch = false` for a server without the extension).
    /// With `tls` it serves HTTPS, as a server behind a TLS-terminating proxy looks to clients.
    public static func start(_ backend: TestBackend, tables: [String], tokens: Set<String> = [],
                             database: DatabaseLocation? = nil, port: Int = 0, tls: TLSConfiguration? = nil,
                             configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> LiveServer {
        let database = try database ?? backend.database()
        var logger = Logger(label: "tablesync-test-server")
        logger.logLevel = .warning
        var configuration = ServerConfiguration(host: "127.0.0.1", port: port, database: database,
                                                tables: tables.map { TableOptions(name: $0) }, tokens: tokens)
        configure(&configuration)
        let (port, task) = try await runOnFreePort { onServerRunning in
            try makeServerApplication(configuration: configuration, logger: logger, onServerRunning: onServerRunning,
                                      server: try tls.map { try .tls(tlsConfiguration: $0) } ?? .http1())
        }
        let baseURL = tls == nil ? "http://127.0.0.1:\(port)" : "https://localhost:\(port)"
        return LiveServer(baseURL: baseURL, database: database, task: task)
    }

    /// Runs the application `make` builds (handing it the callback that learns the listening channel) until the
    /// returned task is cancelled, on threads of its own (``ServerExecutor``: clients in this process block the
    /// shared pool's threads). Returns once it listens, with its port.
    static func runOnFreePort<App: ApplicationProtocol>(
        _ make: (@escaping @Sendable (any Channel) async -> Void) throws -> App
    ) async throws -> (port: Int, task: Task<Void, any Error>) {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = try make { channel in continuation.yield(channel.localAddress?.port ?? 0) }
        let task = Task(executorPreference: ServerExecutor.shared) {
            defer { continuation.finish() }
            try await app.runService(gracefulShutdownSignals: [])
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            _ = await task.result
            throw ConfigurationError("the test server did not start")
        }
        return (port, task)
    }

    /// The port it listens on.
    public var port: Int { Int(baseURL.split(separator: ":").last!)! }

    /// Stops the server and waits until it has.
    public func stop() async {
        task.cancel()
        _ = await task.result
    }
}
