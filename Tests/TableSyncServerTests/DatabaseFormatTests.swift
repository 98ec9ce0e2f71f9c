import Foundation
import GRDB
import PostgresNIO
import Testing
@testable import TableSyncServer
import TestSupport

/// The server database's format across versions, against a SQLite database 0.1.0 wrote (committed under
/// `Tests/Fixtures/format-0.1.0/server.sqlite`: two records inserted through that version's server) and a PostgreSQL
/// database brought to 0.1.0's tables: a newer server upgrades it in place at start, and a server refuses a newer
/// one at start, naming both formats, and changes nothing.
@Suite("Database format", .serialized) struct DatabaseFormatTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/format-0.1.0/server.sqlite").path

    /// The format a SQLite database names, `nil` without a format table.
    static func sqliteFormat(_ path: String) throws -> Int? {
        try DatabaseQueue(path: path).read { db in
            guard try db.tableExists(DatabaseFormat.table) else { return nil }
            return try Int.fetchOne(db, sql: "SELECT max(format) FROM \(DatabaseFormat.table)")
        }
    }

    /// Gives the SQLite database at `path` a format table naming `format`.
    static func nameFormat(_ format: Int, _ path: String) throws {
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "CREATE TABLE \(DatabaseFormat.table) (format INTEGER NOT NULL)")
            try db.execute(sql: "INSERT INTO \(DatabaseFormat.table) VALUES (\(format))")
        }
    }

    /// The tables the SQLite database at `path` keeps a clock row for.
    static func clockTables(_ path: String) throws -> [String] {
        try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT table_name FROM \(RecordColumns.clockTable) ORDER BY table_name")
        }
    }

    @Test("a SQLite database 0.1.0 wrote is served, and upgraded in place to this format at start")
    func olderSQLiteDatabaseIsUpgraded() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("old.sqlite")
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: path)
        #expect(try Self.sqliteFormat(path) == nil, "0.1.0 wrote no format")
        try await withServer(.sqlite, tables: [TableOptions(name: "todo")], database: .sqlite(path: path), setup: .live)
        { client in
            let page = try await client.send(.get, "/tables/todo")
            let ids = try page.json["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
            #expect(ids?.sorted() == ["a", "b"], "its records are served")
            #expect(try Self.sqliteFormat(path) == DatabaseFormat.current)
            let (table, indexes) = try Self.recordsLayout(path)
            #expect(!table.uppercased().contains("WITHOUT ROWID"), "the records table is an ordinary one: \(table)")
            #expect(
                Set(indexes).isSuperset(of: [
                    SQLitePlannerStatistics.primaryKeyIndex, RecordColumns.updatedIndex, RecordColumns.createdIndex
                ]), "\(indexes)")
        }
    }

    /// The `CREATE TABLE` of the records table in the SQLite database at `path`, and the names of its indexes.
    static func recordsLayout(_ path: String) throws -> (table: String, indexes: [String]) {
        try DatabaseQueue(path: path).read { db in
            let table = try String.fetchOne(
                db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                arguments: [RecordColumns.recordsTable])
            let indexes = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY name",
                arguments: [RecordColumns.recordsTable])
            return (table ?? "", indexes)
        }
    }

    @Test(
        """
        a records table made WITHOUT ROWID is rebuilt at start as an ordinary one with the same rows, indexes and \
        declared columns
        """)
    func clusteredRecordsTableIsRebuilt() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("clustered.sqlite")
        let schema = try TableSchema(parsing: "rank:number")
        let options = [TableOptions(name: "todo"), TableOptions(name: "ranked", schema: schema)]
        // A database as the previous layout left it: the table clustered on its key, with rows, a soft-deleted one,
        // and a declared column's index.
        let repository = try SQLiteRecordRepository(path: path)
        try await repository.prepare(tables: options)
        let writes = (0..<50).map { index in
            RecordWriteRequest(table: index % 2 == 0 ? "todo" : "ranked", id: "r\(index)") { _ in
                .insert(["rank": .integer(Int64(index)), "text": .string(String(repeating: "x", count: index * 100))])
            }
        }
        _ = try await repository.write(writes)
        _ = try await repository.write([RecordWriteRequest(table: "todo", id: "r0") { _ in .softDelete }])
        let ordinary = try Self.recordsLayout(path)
        try await DatabaseQueue(path: path).write { db in
            let table = RecordColumns.recordsTable
            let indexes = try String.fetchAll(
                db, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
                arguments: [table])
            try db.execute(sql: RecordColumns.createRecordsTable(.sqlite, named: "clustered") + " WITHOUT ROWID")
            try db.execute(sql: "INSERT INTO clustered SELECT * FROM \(table)")
            try db.execute(sql: "DROP TABLE \(table)")
            try db.execute(sql: "ALTER TABLE clustered RENAME TO \(table)")
            for index in indexes { try db.execute(sql: index) }
        }
        let clustered = try Self.recordsLayout(path)
        #expect(clustered.table.uppercased().contains("WITHOUT ROWID"))
        let dump = "SELECT table_name, id, created_at, updated_at, deleted, body FROM tablesync_records ORDER BY 1, 2"
        let before = try DatabaseQueue(path: path).read { db in try Row.fetchAll(db, sql: dump) }

        try await SQLiteRecordRepository(path: path).prepare(tables: options)
        let after = try DatabaseQueue(path: path).read { db in try Row.fetchAll(db, sql: dump) }
        #expect(after == before)
        #expect(after.count == 50)
        let rebuilt = try Self.recordsLayout(path)
        #expect(!rebuilt.table.uppercased().contains("WITHOUT ROWID"), "\(rebuilt.table)")
        #expect(rebuilt.indexes == ordinary.indexes && rebuilt.indexes.count == 4, "\(rebuilt.indexes)")
        // The start after is a start like any other.
        try await SQLiteRecordRepository(path: path).prepare(tables: options)
        #expect(try Self.recordsLayout(path) == rebuilt)
    }

    @Test("a SQLite database of a newer format is refused at start with both formats named, its tables unchanged")
    func newerSQLiteDatabaseIsRefused() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("newer.sqlite")
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: path)
        try Self.nameFormat(DatabaseFormat.current + 1, path)
        let repository = try SQLiteRecordRepository(path: path)
        do {
            try await repository.prepare(tables: [TableOptions(name: "todo"), TableOptions(name: "added")])
            Issue.record("a newer database must be refused")
        } catch let error as ConfigurationError {
            #expect(error.message.contains("format \(DatabaseFormat.current + 1)"), "\(error.message)")
            #expect(error.message.contains("up to \(DatabaseFormat.current)"), "\(error.message)")
        }
        #expect(try Self.sqliteFormat(path) == DatabaseFormat.current + 1)
        #expect(try Self.clockTables(path) == ["todo"], "no table was added by the refused start")
    }

    @Test("PostgreSQL: a database with 0.1.0's tables is upgraded at start; one of a newer format is refused")
    func postgresFormats() async throws {
        guard Backend.available.contains(.postgres) else { return }
        let database = try await sideDatabase(.postgres, suffix: "_format")
        guard case .postgres(let location) = database else { return }
        @Sendable func run(_ sql: String) async throws {
            try await withPostgresClient(location) { client in
                _ = try await client.query(PostgresQuery(unsafeSQL: sql), logger: testLogger)
            }
        }
        @Sendable func format() async throws -> Int? {
            try await withPostgresClient(location) { client in
                // Two statements: PostgreSQL resolves every table a statement names before it runs any of it.
                let exists = try await client.query(
                    PostgresQuery(unsafeSQL: "SELECT to_regclass('\(DatabaseFormat.table)') IS NOT NULL"),
                    logger: testLogger
                ).collect().first?.decode(Bool.self)
                guard exists == true else { return nil }
                return try await client.query(
                    PostgresQuery(unsafeSQL: "SELECT max(format)::bigint FROM \(DatabaseFormat.table)"),
                    logger: testLogger
                ).collect().first?.decode(Int?.self)
            }
        }
        let table = [TableOptions(name: "todo")]
        try await withPostgresClient(location) { client in
            let repository = try PostgresRecordRepository(client: client, logger: testLogger)
            // The side database outlives a run: whatever an earlier one left, start from 0.1.0's tables.
            try await run("DROP TABLE IF EXISTS \(DatabaseFormat.table)")
            try await repository.prepare(tables: table)
            try await run("DROP TABLE \(DatabaseFormat.table)")
            #expect(try await format() == nil, "the tables as 0.1.0 left them")
            try await repository.prepare(tables: table)
            #expect(try await format() == DatabaseFormat.current, "upgraded in place")

            try await run("UPDATE \(DatabaseFormat.table) SET format = \(DatabaseFormat.current + 1)")
            do {
                try await repository.prepare(tables: table + [TableOptions(name: "added")])
                Issue.record("a newer database must be refused")
            } catch let error as ConfigurationError {
                #expect(error.message.contains("format \(DatabaseFormat.current + 1)"), "\(error.message)")
            }
            #expect(try await format() == DatabaseFormat.current + 1, "left as it was")
            try await run("UPDATE \(DatabaseFormat.table) SET format = \(DatabaseFormat.current)")
        }
    }
}
