import Foundation
import Hummingbird
import Logging
import TableSyncServer

/// `tablesync-server` running in this process on a loopback port of its own, reached over a real socket.
public final class LiveServer: Sendable {
    /// `http://127.0.0.1:PORT`.
    public let baseURL: String
    /// The database it serves from.
    public let database: DatabaseLocation
    private let task: Task<Void, Error>

    private init(baseURL: String, database: DatabaseLocation, task: Task<Void, Error>) {
        self.baseURL = baseURL
        self.database = database
        self.task = task
    }

    /// Starts a server on `backend` serving `tables`.
    public static func start(_ backend: TestBackend, tables: [String], tokens: Set<String> = [],
                             database: DatabaseLocation? = nil) async throws -> LiveServer {
        let database = try database ?? backend.database()
        var logger = Logger(label: "tablesync-test-server")
        logger.logLevel = .warning
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, database: database,
                                                tables: tables.map { TableOptions(name: $0) }, tokens: tokens)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = try makeServerApplication(configuration: configuration, logger: logger) { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
        }
        let task = Task {
            defer { continuation.finish() }
            try await app.runService(gracefulShutdownSignals: [])
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            _ = await task.result
            throw ConfigurationError("the test server did not start")
        }
        return LiveServer(baseURL: "http://127.0.0.1:\(port)", database: database, task: task)
    }

    /// Stops the server and waits until it has.
    public func stop() async {
        task.cancel()
        _ = await task.result
    }
}
