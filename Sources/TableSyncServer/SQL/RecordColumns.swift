import SyncProtocol

/// The storage layout shared by both repositories: every served table lives in one SQL table,
/// `tablesync_records`, keyed by `(table_name, id)`, with the system properties in columns and the other
/// properties as one JSON object in `body` (TEXT in SQLite, JSONB in PostgreSQL). Dates are 100-ns ticks
/// since the Unix epoch in 64-bit integers, so that `(updated_at, id)` keyset paging is exact.
///
/// A table with declared columns adds one partial expression index per column (``DeclaredColumnSQL``), and its
/// declaration is kept in `tablesync_declared_columns` to tell at the next start whether it changed.
///
/// SQL identifiers are therefore fixed strings in this file and index names derived from the configuration; no name
/// from a request ever becomes one. The benchmarks, which fill the tables directly, take the names from here too.
package enum RecordColumns {
    package static let recordsTable = "tablesync_records"
    package static let clockTable = "tablesync_table_clock"
    /// One row per table with declared columns: `table_name` and `columns`, the ``TableSchema/text`` it was last
    /// served with.
    static let declaredColumnsTable = "tablesync_declared_columns"
    static let columnsDeclaration = "columns"

    package static let tableName = "table_name"
    package static let id = "id"
    package static let createdAt = "created_at"
    package static let updatedAt = "updated_at"
    package static let deleted = "deleted"
    package static let body = "body"
    /// Every column of the records table, in the order it declares them: the list an `INSERT` of whole rows names.
    package static let recordsColumns = [tableName, id, createdAt, updatedAt, deleted, body].joined(separator: ", ")

    /// The clock table's other column: the last `updatedAt` a write of the table was stamped with.
    package static let lastUpdatedAt = "last_updated_at"
    /// The keyset index of every table: `(table_name, updated_at, id)`.
    static let updatedIndex = "tablesync_records_updated"
    /// The index of orders by `createdAt`: `(table_name, created_at, id)`.
    static let createdIndex = "tablesync_records_created"

    /// One statement of the schema: it creates one object when missing. An index's statement names the index, so
    /// that a repository can look for it first (on PostgreSQL even `CREATE INDEX IF NOT EXISTS` locks the table
    /// against writers before it finds the index there).
    struct SchemaStatement: Sendable {
        let sql: String
        let index: String?
    }

    /// The schema in `dialect`, the one place it is written: the records table, its keyset index and its index of
    /// creation order, the per-table clock rows and the declarations of tables with columns (docs/server.md). Names
    /// are compared as bytes
    /// (`COLLATE "C"` on PostgreSQL, SQLite's default), so both databases order ids alike.
    static func schema(_ dialect: SQLDialect) -> [SchemaStatement] {
        let (key, integer) = dialect == .sqlite ? ("TEXT", "INTEGER") : ("TEXT COLLATE \"C\"", "BIGINT")
        return [
            SchemaStatement(sql: createRecordsTable(dialect, named: recordsTable), index: nil),
            SchemaStatement(
                sql:
                    "CREATE INDEX IF NOT EXISTS \(updatedIndex) ON \(recordsTable) (\(tableName), \(updatedAt), \(id))",
                index: updatedIndex),
            SchemaStatement(
                sql:
                    "CREATE INDEX IF NOT EXISTS \(createdIndex) ON \(recordsTable) (\(tableName), \(createdAt), \(id))",
                index: createdIndex),
            SchemaStatement(
                sql: """
                    CREATE TABLE IF NOT EXISTS \(clockTable) (
                        \(tableName) \(key) PRIMARY KEY,
                        \(lastUpdatedAt) \(integer) NOT NULL
                    )
                    """, index: nil),
            SchemaStatement(
                sql: """
                    CREATE TABLE IF NOT EXISTS \(declaredColumnsTable) (
                        \(tableName) \(key) PRIMARY KEY,
                        \(columnsDeclaration) TEXT NOT NULL
                    )
                    """, index: nil)
        ]
    }

    /// Creates the records table under `name` unless it exists. On SQLite an ordinary table, its rows in the order
    /// they came, with a unique index on its key: in a table clustered on its key (`WITHOUT ROWID`, as 0.1.0 made
    /// it) a large body lies in the key's B-tree, and every insert beside it moved it about.
    static func createRecordsTable(_ dialect: SQLDialect, named name: String) -> String {
        let (key, integer, flag, json) =
            switch dialect {
            case .sqlite: ("TEXT", "INTEGER", "INTEGER NOT NULL DEFAULT 0", "TEXT")
            case .postgres: ("TEXT COLLATE \"C\"", "BIGINT", "BOOLEAN NOT NULL DEFAULT FALSE", "JSONB")
            }
        return """
            CREATE TABLE IF NOT EXISTS \(name) (
                \(tableName) \(key) NOT NULL,
                \(id) \(key) NOT NULL,
                \(createdAt) \(integer) NOT NULL,
                \(updatedAt) \(integer) NOT NULL,
                \(deleted) \(flag),
                \(body) \(json) NOT NULL,
                PRIMARY KEY (\(tableName), \(id))
            )
            """
    }

    /// The column that holds a system property (matched without regard to case), or `nil` for `version`
    /// (derived from `updatedAt`, never stored) and for every other name.
    static func column(forSystemProperty name: String) -> String? {
        switch name.lowercased() {
        case SystemProperty.id.lowercased(): return id
        case SystemProperty.createdAt.lowercased(): return createdAt
        case SystemProperty.updatedAt.lowercased(): return updatedAt
        case SystemProperty.deleted.lowercased(): return deleted
        default: return nil
        }
    }
}
