import SyncProtocol

/// The SQL of a declared column (``TableSchema``), as pure functions: the typed expression that reads it from the
/// JSON body, the index built on exactly that expression, and the ordering that walks the index.
///
/// Records stay in `tablesync_records` (system columns + JSON body). Per declared column there is one partial
/// expression index, `WHERE table_name = '<table>'`, on the typed extraction:
///
/// | type | SQLite | PostgreSQL |
/// |---|---|---|
/// | string, date | `json_extract(body, '$."c"')` | `(body ->> 'c')`, indexed and compared `COLLATE "C"` |
/// | number | `json_extract(body, '$."c"')` | `(CASE WHEN jsonb_typeof(body -> 'c') = 'number' THEN CAST(body ->> 'c'
/// AS DOUBLE PRECISION) END)` |
/// | boolean | `json_extract(body, '$."c"')` (1 or 0) | the same with `'boolean'` and `BOOLEAN` |
///
/// A database uses an expression index only for the very expression it was built on, and a partial index only when
/// the query says `table_name = '<table>'` as the index does. So for a table with declared columns, `$filter`,
/// `$orderby` and the table condition use these texts, with the column and table names as SQL literals (the index
/// cannot match a bound parameter). Those names come from the configuration, never from a request, and are plain
/// identifiers and table names (``PropertyName``, ``TableName``); they are quoted all the same.
///
/// Validation makes the extraction exact: every stored value of a declared column is `null` or of its type (dates
/// in canonical text), so the typed expression is the value the evaluator reads. The expression must still never
/// fail on any row of `tablesync_records`: PostgreSQL builds an index over old versions of rows that other
/// transactions may still see (a record fixed just before a restart with the declaration), and its `WHERE` does not
/// promise to test `table_name` before the rest. Hence the type guard on PostgreSQL's casts; SQLite's `json_extract`
/// fails on nothing.
enum DeclaredColumnSQL {
    /// The typed value of `column` in a row's body: NULL when the record has no value.
    static func value(_ column: DeclaredColumn, dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite:
            return "json_extract(\(RecordColumns.body), \(literal(FilterSQLTranslator.jsonPath(column.name))))"
        case .postgres:
            let text = "\(RecordColumns.body) ->> \(literal(column.name))"
            let json = "\(RecordColumns.body) -> \(literal(column.name))"
            switch column.type {
            case .string, .date, .dateOnly: return "(\(text))"
            case .number:
                return "(CASE WHEN jsonb_typeof(\(json)) = 'number' THEN CAST(\(text) AS DOUBLE PRECISION) END)"
            case .boolean: return "(CASE WHEN jsonb_typeof(\(json)) = 'boolean' THEN CAST(\(text) AS BOOLEAN) END)"
            }
        }
    }

    /// `true` when comparisons of `column` in `dialect` need `COLLATE "C"` (PostgreSQL text), as its index has.
    static func isCollated(_ column: DeclaredColumn, dialect: SQLDialect) -> Bool {
        dialect == .postgres && (column.type == .string || column.type == .date || column.type == .dateOnly)
    }

    /// An `ORDER BY` term for `column`, in the order its index is built in when ascending (missing values first, as
    /// for schemaless properties); the repository appends `id`.
    static func ordering(_ column: DeclaredColumn, descending: Bool, dialect: SQLDialect) -> String {
        let parts = orderingParts(column, descending: descending, dialect: dialect)
        return "\(parts.expression) \(parts.direction)"
    }

    /// ``ordering(_:descending:dialect:)`` as the expression ordered by and its direction.
    static func orderingParts(
        _ column: DeclaredColumn, descending: Bool, dialect: SQLDialect
    ) -> (expression: String, direction: String) {
        let collate = isCollated(column, dialect: dialect) ? " COLLATE \"C\"" : ""
        let nulls = dialect == .postgres ? (descending ? " NULLS LAST" : " NULLS FIRST") : ""
        return ("\(value(column, dialect: dialect))\(collate)", "\(descending ? "DESC" : "ASC")\(nulls)")
    }

    /// `table_name = '<table>'`: the table condition of every query of a table with declared columns, spelled as the
    /// partial indexes' predicate so that the database can use them.
    static func tableCondition(_ table: String) -> String {
        "\(RecordColumns.tableName) = \(literal(table))"
    }

    /// The name of the index of `column` of `table`: a stable hash of the table, the column and its type, so that
    /// a changed declaration gets a new index and the old one can be found from the stored declaration and
    /// dropped; short enough for PostgreSQL's 63-byte identifiers.
    static func indexName(table: String, column: DeclaredColumn) -> String {
        "tablesync_column_" + StableDigest.hex("\(table)\u{0}\(column.name)\u{0}\(column.type.rawValue)".utf8)
    }

    /// Creates the index of `column` of `table` unless it exists: on the typed value, then `id` (the tie-break of
    /// every order), over the table's rows only. On PostgreSQL `CONCURRENTLY`, outside a transaction: a plain build
    /// holds up the writes of every server on the database.
    static func createIndex(table: String, column: DeclaredColumn, dialect: SQLDialect) -> String {
        let key: String
        let concurrently: String
        switch dialect {
        case .sqlite:
            key = value(column, dialect: dialect)
            concurrently = ""
        case .postgres:
            let collate = isCollated(column, dialect: dialect) ? " COLLATE \"C\"" : ""
            key = "(\(value(column, dialect: dialect)))\(collate) NULLS FIRST"
            concurrently = " CONCURRENTLY"
        }
        return
            """
            CREATE INDEX\(concurrently) IF NOT EXISTS \(indexName(table: table, column: column)) ON \
            \(RecordColumns.recordsTable) (\(key), \(RecordColumns.id)) WHERE \(tableCondition(table))
            """
    }

    /// Drops the index of `column` of `table` (a declaration that changed or went away). On PostgreSQL
    /// `CONCURRENTLY`, outside a transaction: a plain drop locks the records table against every reader.
    static func dropIndex(table: String, column: DeclaredColumn, dialect: SQLDialect) -> String {
        let concurrently = dialect == .postgres ? " CONCURRENTLY" : ""
        return "DROP INDEX\(concurrently) IF EXISTS \(indexName(table: table, column: column))"
    }

    /// `text` as an SQL string literal.
    static func literal(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
    }
}
