/// Statistics that tell SQLite's query planner the shape of `tablesync_records`, so that it uses the indexes of
/// declared columns.
///
/// Without statistics (nobody runs `ANALYZE` on a server's file), SQLite assumes that `table_name = ?` selects about
/// ten rows, and then always searches the primary key `(table_name, id)` rather than an index on a declared column:
/// `$filter=rank eq 5` read every row of the table. The rows
/// here say what holds for this layout: a table has many rows (`table_name = ?` selects 100,000 of 1,000,000), and a
/// declared column's value picks out few of them (10). Written only where `sqlite_stat1` has no row for that index
/// yet, so real statistics from an `ANALYZE` are kept (and replace these when it runs); the server writes them only
/// when some table declares columns.
enum SQLitePlannerStatistics {
    /// Creates `sqlite_stat1` when missing and makes the planner read it again.
    static let load = "ANALYZE sqlite_schema"

    /// Adds the row of one index unless `sqlite_stat1` has one (arguments: table, index, statistics, table, index).
    static let insertUnlessPresent = """
        INSERT INTO sqlite_stat1 (tbl, idx, stat) SELECT ?, ?, ?
        WHERE NOT EXISTS (SELECT 1 FROM sqlite_stat1 WHERE tbl = ? AND idx = ?)
        """

    /// The index SQLite makes for the records table's primary key.
    static let primaryKeyIndex = "sqlite_autoindex_\(RecordColumns.recordsTable)_1"

    /// The rows for the records table's own indexes and for `indexNames`, the indexes of declared columns: each is
    /// `(index, "rows rows-per-key-prefix…")` as `sqlite_stat1` spells statistics.
    static func rows(indexNames: [String]) -> [(index: String, stat: String)] {
        [
            (primaryKeyIndex, "1000000 100000 1"), (RecordColumns.updatedIndex, "1000000 100000 1 1"),
            (RecordColumns.createdIndex, "1000000 100000 1 1")
        ] + indexNames.map { ($0, "100000 10 1") }
    }
}
