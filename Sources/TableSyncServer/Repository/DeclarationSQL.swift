/// The statements of a table's stored declaration of columns (``RecordColumns/declaredColumnsTable``) and of the rows
/// checked against a new declaration (``SchemaTransition``), in either dialect.
enum DeclarationSQL {
    /// The declaration `table` was last served with, as ``TableSchema/text``; no row for a table without one.
    static func stored(table: String, dialect: SQLDialect) -> SQLStatement {
        var builder = SQLBuilder(dialect: dialect)
        let sql = """
            SELECT \(RecordColumns.columnsDeclaration) FROM \(RecordColumns.declaredColumnsTable) WHERE \
            \(RecordColumns.tableName) = \(builder.bind(.text(table)))
            """
        return builder.statement(sql)
    }

    /// Keeps `text` as the declaration of `table`, over the one kept before.
    static func store(table: String, text: String, dialect: SQLDialect) -> SQLStatement {
        var builder = SQLBuilder(dialect: dialect)
        let (name, columns) = (RecordColumns.tableName, RecordColumns.columnsDeclaration)
        let sql = """
            INSERT INTO \(RecordColumns.declaredColumnsTable) (\(name), \(columns)) VALUES \
            (\(builder.bind(.text(table))), \(builder.bind(.text(text)))) ON CONFLICT (\(name)) DO UPDATE SET \
            \(columns) = excluded.\(columns)
            """
        return builder.statement(sql)
    }

    /// Forgets the declaration of `table`, which is served without one.
    static func forget(table: String, dialect: SQLDialect) -> SQLStatement {
        var builder = SQLBuilder(dialect: dialect)
        let sql = """
            DELETE FROM \(RecordColumns.declaredColumnsTable) WHERE \
            \(RecordColumns.tableName) = \(builder.bind(.text(table)))
            """
        return builder.statement(sql)
    }

    /// The id and the body, as text, of every row of `table`, in id order.
    static func rows(table: String, dialect: SQLDialect) -> SQLStatement {
        var builder = SQLBuilder(dialect: dialect)
        let body = dialect == .postgres ? "CAST(\(RecordColumns.body) AS TEXT)" : RecordColumns.body
        let sql = """
            SELECT \(RecordColumns.id), \(body) FROM \(RecordColumns.recordsTable) WHERE \
            \(RecordColumns.tableName) = \(builder.bind(.text(table))) ORDER BY \(RecordColumns.id)
            """
        return builder.statement(sql)
    }
}
