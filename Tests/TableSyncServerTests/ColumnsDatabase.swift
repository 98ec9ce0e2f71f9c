import GRDB
import PostgresNIO
@testable import TableSyncServer
import TestSupport

/// Where tests that declare columns keep their records. On PostgreSQL that is a database of its own beside the shared
/// test database (its name plus `_columns`, created when missing): building and dropping indexes `CONCURRENTLY`
/// waits for every transaction of the database, which must not slow the timing-sensitive tests there, nor other runs
/// sharing it. On SQLite it is a fresh file, as for every test.
func columnsDatabase(_ backend: Backend) async throws -> DatabaseLocation {
    try await sideDatabase(backend, suffix: "_columns")
}

/// A PostgreSQL database of its own beside the shared test database (its name plus `suffix`, created when missing),
/// for tests that must not slow the others or that watch everything happening in their database; on SQLite a fresh
/// file, as for every test.
func sideDatabase(_ backend: Backend, suffix: String) async throws -> DatabaseLocation {
    let shared = try backend.database()
    guard case .postgres(var location) = shared else { return shared }
    location.database += suffix
    try await SideDatabaseCreation.shared.ensure(location, from: shared)
    return .postgres(location)
}

/// Creates each side database once per test run.
private actor SideDatabaseCreation {
    static let shared = SideDatabaseCreation()
    private var ready: Set<String> = []

    func ensure(_ location: PostgresLocation, from shared: DatabaseLocation) async throws {
        guard !ready.contains(location.database), case .postgres(let sharedLocation) = shared else { return }
        try await withPostgresClient(sharedLocation) { client in
            func exists() async throws -> Bool {
                try await client.query(
                    "SELECT 1 FROM pg_database WHERE datname = \(location.database)", logger: testLogger
                )
                .collect().isEmpty == false
            }
            guard try await !exists() else { return }
            do {
                try await client.query(
                    PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(location.database)\""), logger: testLogger)
            } catch {
                // Another test run created it meanwhile.
                guard try await exists() else { throw error }
            }
        }
        ready.insert(location.database)
    }
}

/// Runs `body` with a client of the database at `location`, running meanwhile.
func withPostgresClient<Value: Sendable>(
    _ location: PostgresLocation, _ body: @Sendable (PostgresClient) async throws -> Value
) async throws -> Value {
    let client = PostgresClient(
        configuration: try location.clientConfiguration(poolSize: ServerConfiguration.defaultPostgresPoolSize),
        backgroundLogger: testLogger)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        return try await body(client)
    }
}

/// `ANALYZE tablesync_records (table_name)`, taken under the servers' start lock: it cannot run beside the index
/// builds of a start (another test's), and waiting for it in a statement would deadlock with them.
func analyzeRecords(_ location: PostgresLocation) async throws {
    try await withPostgresClient(location) { client in
        try await client.withConnection { connection in
            while try await connection.query("SELECT pg_try_advisory_lock(7244831)", logger: testLogger)
                .collect().first?.decode(Bool.self) != true
            {
                try await Task.sleep(for: .milliseconds(50))
            }
            do {
                try await connection.query("ANALYZE tablesync_records (table_name)", logger: testLogger)
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(7244831)", logger: testLogger)
                throw error
            }
            try await connection.query("SELECT pg_advisory_unlock(7244831)", logger: testLogger)
        }
    }
}

/// Runs `body` with a repository on `backend`'s ``columnsDatabase(_:)``, a way to run SQL on the same database (which
/// answers the last column of each row as text), and where that database is.
///
/// `sortsDiscouraged`: on PostgreSQL, each statement runs with `enable_sort` off, for the tests whose `EXPLAIN` checks
/// that an index gives a page's order. The planner weighs a sort of the few rows it expects from one table in
/// `tablesync_records` against an ordered index scan, and what it expects moves with the other suites' rows beside
/// them (a run under load once planned a sort); with sorts discouraged it takes the index whenever one gives the
/// order, and a `Sort` left in the plan still means none does.
func withDatabase(
    _ backend: Backend,
    sortsDiscouraged: Bool = false,
    _ body:
        @Sendable (any RecordRepository, _ sql: @Sendable (SQLStatement) async throws -> [String], DatabaseLocation)
        async throws -> Void
) async throws {
    let database = try await columnsDatabase(backend)
    switch database {
    case .sqlite(let path):
        defer { TestBackend.removeFiles(of: .sqlite(path: path)) }
        let repository = try SQLiteRecordRepository(path: path)
        try await body(
            repository,
            { statement in
                let queue = try DatabaseQueue(path: path)
                defer { try? queue.close() }
                return try await queue.read { db in
                    try Row.fetchAll(
                        db, sql: statement.sql, arguments: SQLiteRecordRepository.arguments(statement.bindings)
                    ).map { row in
                        switch row.databaseValues.last?.storage {
                        case .string(let text): return text
                        case .int64(let number): return String(number)
                        default: return ""
                        }
                    }
                }
            }, database)
    case .postgres(let location):
        try await withPostgresClient(location) { client in
            try await body(
                try PostgresRecordRepository(client: client, logger: testLogger),
                { statement in
                    try await client.withConnection { connection in
                        if sortsDiscouraged { try await connection.query("SET enable_sort = off", logger: testLogger) }
                        var lines: [String] = []
                        for try await row in try await connection.query(
                            PostgresRecordRepository.query(statement), logger: testLogger)
                        {
                            let cells = row.makeRandomAccess()
                            lines.append((try? cells[cells.count - 1].decode(String.self)) ?? "")
                        }
                        if sortsDiscouraged { try await connection.query("RESET enable_sort", logger: testLogger) }
                        return lines
                    }
                }, database)
        }
    }
}
