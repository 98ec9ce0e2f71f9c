import SyncProtocol

/// The version of the server's tables in its database (`tablesync_format`, one row): what outlives a binary. A
/// database made before formats were numbered (0.1.0) has no such table and is format 1, as it is laid out today.
///
/// At start, a server upgrades a database of an older format in place (today: writing the number, in the same
/// transaction as the rest of the schema) and refuses one of a newer format before it creates or changes anything,
/// with a message that names both (``refusal(found:database:)``, exit 2). A change to the tables that an older
/// binary would misread raises ``current`` and adds its upgrade here.
enum DatabaseFormat {
    /// The format this binary writes, and the newest it reads.
    static let current = 1
    /// The table that holds it.
    static let table = "tablesync_format"
    /// Its one column.
    static let column = "format"

    /// Whether a database whose format table names `found` may be served (one without the table may: it is
    /// older): `false` for a newer format, and for a number no version wrote (below 1), which is refused rather than
    /// guessed at.
    static func accepts(found: Int) -> Bool {
        found >= 1 && found <= current
    }

    /// The start's refusal of a database of format `found`; `database` says which (a file's path, or "on
    /// PostgreSQL": a URL may hold a password).
    static func refusal(found: Int, database: String) -> ConfigurationError {
        ConfigurationError(
            """
            the database \(database) is in format \(found), newer than the formats this tablesync-server \
            \(TableSyncVersion.current) serves (up to \(current)): a newer tablesync-server made or upgraded it; run \
            that version (or a later one). Nothing was changed.
            """)
    }

    /// The statements that record ``current`` once the schema is in place (both dialects).
    static let recordCurrent = [
        "CREATE TABLE IF NOT EXISTS \(table) (\(column) INTEGER NOT NULL)",
        "DELETE FROM \(table)",
        "INSERT INTO \(table) (\(column)) VALUES (\(current))"
    ]
}
