import SyncProtocol

/// The SQL of both repositories, as pure functions of the dialect and the request (tested by their output).
enum RecordQuerySQL {
    static let columns =
        "\(RecordColumns.id), \(RecordColumns.createdAt), \(RecordColumns.updatedAt), \(RecordColumns.deleted), "

    static func selectColumns(_ dialect: SQLDialect) -> String {
        columns + (dialect == .postgres ? "CAST(\(RecordColumns.body) AS TEXT)" : RecordColumns.body)
    }

    /// The latest `updatedAt` of the rows stored under one table name, its only parameter: the last entry of that
    /// name in the keyset index (``RecordColumns/updatedIndex``), so one index probe; no row when there are none.
    static func lastUpdatedAt(_ dialect: SQLDialect) -> String {
        let parameter = dialect == .postgres ? "$1" : "?"
        return "SELECT \(RecordColumns.updatedAt) FROM \(RecordColumns.recordsTable) "
            + "WHERE \(RecordColumns.tableName) = \(parameter) ORDER BY \(RecordColumns.updatedAt) DESC LIMIT 1"
    }

    /// The page query (asking for one row more than `$top`, to know whether more follow) and, when asked
    /// for, the count query.
    static func list(
        table: String, query: ListQuery, dialect: SQLDialect
    ) throws(FilterTranslationError) -> (page: SQLStatement, count: SQLStatement?) {
        var builder = SQLBuilder(dialect: dialect)
        let whereClause = try condition(table: table, query: query, builder: &builder)
        let countStatement =
            query.includeCount
            ? builder.statement("SELECT COUNT(*) FROM \(RecordColumns.recordsTable) WHERE \(whereClause)")
            : nil
        var orderTerms: [String] = []
        var ordersById = false
        for key in query.orderBy {
            let direction = key.descending ? "DESC" : "ASC"
            if SystemProperty.isSystemProperty(key.property),
                let column = RecordColumns.column(forSystemProperty: key.property)
            {
                orderTerms.append("\(column) \(direction)")
                if column == RecordColumns.id {
                    ordersById = true
                    break
                }
            } else if let column = query.schema?.column(named: key.property) {
                orderTerms.append(DeclaredColumnSQL.ordering(column, descending: key.descending, dialect: dialect))
            } else {
                let expression = FilterSQLTranslator.orderingExpression(forProperty: key.property, into: &builder)
                // PostgreSQL puts NULL last in ascending order; SQLite first. Make both put missing values first.
                let nulls = dialect == .postgres ? (key.descending ? " NULLS LAST" : " NULLS FIRST") : ""
                orderTerms.append("\(expression) \(direction)\(nulls)")
            }
        }
        if !ordersById { orderTerms.append("\(RecordColumns.id) ASC") }
        let limit = builder.bind(.integer(Int64(query.top) + 1))
        let offset = builder.bind(.integer(Int64(query.skip)))
        let page = builder.statement(
            """
            SELECT \(selectColumns(dialect)) FROM \(RecordColumns.recordsTable) WHERE \(whereClause) ORDER BY \
            \(orderTerms.joined(separator: ", ")) LIMIT \(limit) OFFSET \(offset)
            """
        )
        return (page, countStatement)
    }

    static func condition(
        table: String, query: ListQuery, builder: inout SQLBuilder
    ) throws(FilterTranslationError) -> String {
        // A table with declared columns names itself as its partial indexes do, so that the database can use them.
        var conditions = [
            query.schema == nil
                ? "\(RecordColumns.tableName) = \(builder.bind(.text(table)))" : DeclaredColumnSQL.tableCondition(table)
        ]
        if !query.includeDeleted { conditions.append("\(RecordColumns.deleted) = FALSE") }
        if let filter = query.filter {
            conditions.append(try FilterSQLTranslator.translate(filter, schema: query.schema, into: &builder))
        }
        return conditions.joined(separator: " AND ")
    }
}
