import GRDB
import SyncProtocol
import TableSyncServer

/// Fills and changes the server's SQLite database directly, so that setting up 100,000 records takes a
/// second instead of 100,000 requests. The schema comes from the server itself (``SQLiteRecordRepository``'s
/// `prepare`); the bulk insert follows its documented layout (docs/server.md: one records table,
/// system properties in columns, `updatedAt` as 100-ns ticks, unique and increasing per table, and the
/// table's clock row at the last one).
enum ServerSeeder {
    /// 2025-01-01T00:00:00Z in ticks; record `n` is stamped one millisecond after record `n - 1`.
    static let firstTicks: Int64 = 17_356_896_000_000_000

    /// Creates the schema for `tables` and inserts `count` records of `dataSet` into each, before the server starts.
    static func seed(database: String, tables: [(name: String, count: Int)], dataSet: DataSet) async throws {
        try await SQLiteRecordRepository(path: database).prepare(tables: tables.map { TableOptions(name: $0.name) })
        let queue = try DatabaseQueue(path: database)
        try await queue.write { db in
            for table in tables {
                let insert = try db.makeStatement(
                    sql: """
                        INSERT INTO \(RecordColumns.recordsTable) (\(RecordColumns.recordsColumns)) VALUES \
                        (?, ?, ?, ?, 0, ?)
                        """)
                var ticks = firstTicks
                for index in 0..<table.count {
                    var properties = dataSet.record(index)
                    let id = properties.removeValue(forKey: SystemProperty.id)!.stringValue!
                    ticks = firstTicks + Int64(index) * 10_000
                    try insert.execute(arguments: [
                        table.name, id, ticks, ticks, CanonicalJSON.string(.object(properties), style: .compact)
                    ])
                }
                let last = RecordColumns.lastUpdatedAt
                try db.execute(
                    sql:
                        """
                        UPDATE \(RecordColumns.clockTable) SET \(last) = max(\(last), ?) WHERE \
                        \(RecordColumns.tableName) = ?
                        """,
                    arguments: [ticks, table.name])
            }
        }
        try queue.close()
    }

    /// Record `index` exactly as the seeded server sends it (system properties included).
    static func servedRecord(_ index: Int, dataSet: DataSet) -> [String: JSONValue] {
        var properties = dataSet.record(index)
        let id = properties.removeValue(forKey: SystemProperty.id)!.stringValue!
        let ticks = firstTicks + Int64(index) * 10_000
        return StoredRecord(id: id, createdAt: ticks, updatedAt: ticks, deleted: false, properties: properties).json()
            .objectValue!
    }

    /// Changes `quantity` of the records `indexes` of `table` through the server's own repository (so each
    /// write gets its `updatedAt` exactly as a request would), while the server runs.
    static func touch(database: String, table: String, indexes: Range<Int>, dataSet: DataSet, value: Int64) async throws
    {
        let repository = try SQLiteRecordRepository(path: database)
        for index in indexes {
            _ = try await repository.write(table: table, id: dataSet.id(index)) { existing in
                var properties = existing?.properties ?? [:]
                properties["quantity"] = .integer(value)
                return .update(properties)
            }
        }
    }
}
