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
/// from a request ever becomes one.
enum RecordColumns {
    static let recordsTable = "tablesync_records"
    static let clockTable = "tablesync_table_clock"
    /// One row per table with declared columns: `table_name` and `columns`, the ``TableSchema/text`` it was last
    /// served with.
    static let declaredColumnsTable = "tablesync_declared_columns"
    static let columnsDeclaration = "columns"

    static let tableName = "table_name"
    static let id = "id"
    static let createdAt = "created_at"
    static let updatedAt = "updated_at"
    static let deleted = "deleted"
    static let body = "body"

    /// The SQLite schema: the records table, its `(table_name, updated_at, id)` index for keyset paging, the
    /// per-table clock rows and the declarations of tables with columns (docs/server.md).
    static let sqliteSchema = """
        CREATE TABLE IF NOT EXISTS \(recordsTable) (
            \(tableName) TEXT NOT NULL,
            \(id) TEXT NOT NULL,
            \(createdAt) INTEGER NOT NULL,
            \(updatedAt) INTEGER NOT NULL,
            \(deleted) INTEGER NOT NULL DEFAULT 0,
            \(body) TEXT NOT NULL,
            PRIMARY KEY (\(tableName), \(id))
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS tablesync_records_updated
            ON \(recordsTable) (\(tableName), \(updatedAt), \(id));
        CREATE TABLE IF NOT EXISTS \(clockTable) (
            \(tableName) TEXT PRIMARY KEY,
            last_updated_at INTEGER NOT NULL
        );
        CREATE TABLE IF NOT EXISTS \(declaredColumnsTable) (
            \(tableName) TEXT PRIMARY KEY,
            \(columnsDeclaration) TEXT NOT NULL
        );
        """

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
