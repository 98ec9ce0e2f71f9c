/// The SQL of writes, as pure functions of the dialect (tested by their output): a ``StoredRowChange`` to the rows
/// stored under one table name, and the statements of the tables' clock rows. The dialects differ in their
/// placeholders, in PostgreSQL's `CAST(… AS JSONB)` of a body, and in how a clock is read (``clock(of:dialect:)``).
enum RecordWriteSQL {
    /// The statement of `change` to the rows stored under `rows` (a ``RecordScope/storedName``).
    static func statement(_ change: StoredRowChange, rows: String, dialect: SQLDialect) -> SQLStatement {
        var builder = SQLBuilder(dialect: dialect)
        let sql: String
        switch change {
        case .insert(let id, let stamp, let body):
            let values = [
                builder.bind(.text(rows)), builder.bind(.text(id)), builder.bind(.integer(stamp)),
                builder.bind(.integer(stamp)), "FALSE", json(builder.bind(.text(body)), dialect)
            ]
            sql = """
                INSERT INTO \(RecordColumns.recordsTable) (\(RecordColumns.recordsColumns)) VALUES \
                (\(values.joined(separator: ", ")))
                """
        case .update(let id, let body, let updatedAt, let deleted):
            sql = """
                UPDATE \(RecordColumns.recordsTable) SET \(RecordColumns.body) = \
                \(json(builder.bind(.text(body)), dialect)), \(RecordColumns.updatedAt) = \
                \(builder.bind(.integer(updatedAt))), \(RecordColumns.deleted) = \(builder.bind(.bool(deleted))) \
                WHERE \(row(rows, id, &builder))
                """
        case .mark(let id, let deleted, let updatedAt):
            sql = """
                UPDATE \(RecordColumns.recordsTable) SET \(RecordColumns.deleted) = \(builder.bind(.bool(deleted))), \
                \(RecordColumns.updatedAt) = \(builder.bind(.integer(updatedAt))) WHERE \(row(rows, id, &builder))
                """
        case .delete(let id):
            sql = "DELETE FROM \(RecordColumns.recordsTable) WHERE \(row(rows, id, &builder))"
        }
        return builder.statement(sql)
    }

    /// Reads `table`'s clock, its only column, under the table's write lock: in SQLite the transaction holds it
    /// already (`BEGIN IMMEDIATE`); in PostgreSQL an update that changes nothing takes the clock row's lock, held to
    /// commit. No row when the table has no clock.
    static func clock(of table: String, dialect: SQLDialect) -> SQLStatement {
        var builder = SQLBuilder(dialect: dialect)
        let condition = "\(RecordColumns.tableName) = \(builder.bind(.text(table)))"
        let last = RecordColumns.lastUpdatedAt
        switch dialect {
        case .sqlite:
            return builder.statement("SELECT \(last) FROM \(RecordColumns.clockTable) WHERE \(condition)")
        case .postgres:
            return builder.statement(
                "UPDATE \(RecordColumns.clockTable) SET \(last) = \(last) WHERE \(condition) RETURNING \(last)")
        }
    }

    /// Sets `table`'s clock to `last`, the last `updatedAt` a write of the table was stamped with.
    static func setClock(of table: String, to last: Int64, dialect: SQLDialect) -> SQLStatement {
        var builder = SQLBuilder(dialect: dialect)
        let sql = """
            UPDATE \(RecordColumns.clockTable) SET \(RecordColumns.lastUpdatedAt) = \(builder.bind(.integer(last))) \
            WHERE \(RecordColumns.tableName) = \(builder.bind(.text(table)))
            """
        return builder.statement(sql)
    }

    /// Gives `table` its clock row, at 0, unless it has one.
    static func registerClock(of table: String, dialect: SQLDialect) -> SQLStatement {
        var builder = SQLBuilder(dialect: dialect)
        let sql = """
            INSERT INTO \(RecordColumns.clockTable) (\(RecordColumns.tableName), \(RecordColumns.lastUpdatedAt)) \
            VALUES (\(builder.bind(.text(table))), 0) ON CONFLICT DO NOTHING
            """
        return builder.statement(sql)
    }

    /// A body's placeholder as the body column takes it.
    private static func json(_ placeholder: String, _ dialect: SQLDialect) -> String {
        dialect == .postgres ? "CAST(\(placeholder) AS JSONB)" : placeholder
    }

    /// The condition that selects record `id` of the rows stored under `rows`.
    private static func row(_ rows: String, _ id: String, _ builder: inout SQLBuilder) -> String {
        "\(RecordColumns.tableName) = \(builder.bind(.text(rows))) AND \(RecordColumns.id) = \(builder.bind(.text(id)))"
    }
}
