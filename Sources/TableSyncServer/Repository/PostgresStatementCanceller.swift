import Logging
import PostgresNIO

/// Ends the statement a pooled connection runs, at once, for a request that was cancelled: its client went away,
/// it ran past the statement time limit, or the server is stopping.
///
/// Closing the connection is not enough: over TLS the connection waits for the database to answer its goodbye
/// (`close_notify`, for up to 5 s), and a database busy with the statement reads nothing until it ends.
/// `pg_cancel_backend`, sent from a connection of its own (the pool's may all be busy), ends it within
/// milliseconds. It needs the process PostgreSQL serves the connection with, asked once per connection.
actor PostgresStatementCanceller {
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    /// The processes of the connections seen most recently, at most ``capacity``: the pool replaces connections
    /// now and then, and a forgotten one is asked again.
    private var processes: [PostgresConnection.ID: Int32] = [:]
    private var remembered: [PostgresConnection.ID] = []
    private let capacity: Int

    init(location: PostgresLocation, poolSize: Int, logger: Logger) throws(ConfigurationError) {
        configuration = try location.singleConnectionConfiguration()
        self.logger = logger
        capacity = 2 * poolSize + 8
    }

    /// The process PostgreSQL serves `connection` with (`pg_backend_pid()`).
    func process(of connection: PostgresConnection) async throws -> Int32 {
        if let known = processes[connection.id] { return known }
        var process: Int32 = 0
        for try await pid in try await connection.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self) {
            process = pid
        }
        processes[connection.id] = process
        remembered.append(connection.id)
        if remembered.count > capacity { processes[remembered.removeFirst()] = nil }
        return process
    }

    /// Asks PostgreSQL to cancel what `process` runs, from a connection of its own; returns at once, with the task
    /// that ends when PostgreSQL has taken the cancel (or it could not be sent).
    nonisolated func cancel(process: Int32) -> Task<Void, Never> {
        let configuration = configuration
        let logger = logger
        return Task {
            do {
                try await PostgresLocation.withSingleConnection(configuration, logger: logger) { connection in
                    _ = try await connection.query("SELECT pg_cancel_backend(\(process))", logger: logger).collect()
                }
            } catch {
                logger.debug(
                    "could not cancel a PostgreSQL statement",
                    metadata: ["process": "\(process)", "error": "\(String(reflecting: error))"])
            }
        }
    }
}
