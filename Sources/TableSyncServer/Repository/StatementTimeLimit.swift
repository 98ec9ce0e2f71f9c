/// A database statement that ran past the server's statement time limit and was cancelled.
struct StatementTimeout: Error, Sendable, CustomStringConvertible {
    let limit: Duration

    var description: String { "the statement ran longer than the server's limit of \(limit.components.seconds) s" }
}

/// Runs database work within a time limit: past the limit the work's task is cancelled (GRDB then interrupts SQLite's
/// statement; PostgreSQL's is cancelled) and ``StatementTimeout`` is thrown. A timer on the cooperative pool, it fires
/// late when other work holds the pool's threads; SQLite therefore keeps the same limit itself (``SQLiteDeadline``).
enum StatementTimeLimit {
    static func run<Value: Sendable>(
        _ limit: Duration, _ work: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            if let value = try await group.next() ?? nil { return value }
            group.cancelAll()
            while (try? await group.next()) != nil {}
            throw StatementTimeout(limit: limit)
        }
    }
}
