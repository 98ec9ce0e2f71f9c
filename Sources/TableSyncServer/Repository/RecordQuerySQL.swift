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
    /// for, the count query. A query that names body properties reads them from each body once
    /// (``ExtractedProperties``): the conditions that name none select the rows, as their indexes serve them, and
    /// the others are applied to the extracted columns.
    static func list(
        table: String, query: ListQuery, dialect: SQLDialect
    ) throws(FilterTranslationError) -> (page: SQLStatement, count: SQLStatement?) {
        var builder = SQLBuilder(dialect: dialect)
        let properties = ExtractedProperties(query: query)
        let (source, whereClause) = try Self.source(
            table: table, query: query, properties: properties, builder: &builder)
        let countStatement =
            query.includeCount
            ? builder.statement("SELECT COUNT(*) FROM \(source) WHERE \(whereClause)")
            : nil
        let order = ordering(query, properties: properties, dialect: dialect, builder: &builder)
        let limit = builder.bind(.integer(Int64(query.top) + 1))
        let offset = builder.bind(.integer(Int64(query.skip)))
        let orderTerms = order.map { "\($0.expression) \($0.direction)" }.joined(separator: ", ")
        let page: SQLStatement
        if dialect == .postgres, !ReadWeight.isIndexedOrder(query.orderBy, schema: query.schema) {
            // A sort reads every row the filter lets through: it sorts them by their keys, bodies unconverted (large
            // ones stay toasted), and only the page's bodies become text.
            let keys = order.indices.map { ", \(order[$0].expression) AS order_\($0)" }.joined()
            let outerOrder = order.indices.map { "order_\($0) \(order[$0].direction)" }.joined(separator: ", ")
            page = builder.statement(
                """
                SELECT \(selectColumns(dialect)) FROM (SELECT \(recordColumns)\(keys) FROM \(source) WHERE \
                \(whereClause) ORDER BY \(orderTerms) LIMIT \(limit) OFFSET \(offset)) AS page ORDER BY \(outerOrder)
                """
            )
        } else {
            page = builder.statement(
                """
                SELECT \(selectColumns(dialect)) FROM \(source) WHERE \(whereClause) ORDER BY \(orderTerms) LIMIT \
                \(limit) OFFSET \(offset)
                """
            )
        }
        return (page, countStatement)
    }

    /// What a list reads from and its condition: the records table and the whole filter; or, when the query's
    /// properties are extracted once per row (``ExtractedProperties``), the rows the system-property conditions let
    /// through with their properties beside them, and the conditions on properties over those.
    private static func source(
        table: String, query: ListQuery, properties: ExtractedProperties?, builder: inout SQLBuilder
    ) throws(FilterTranslationError) -> (source: String, whereClause: String) {
        guard let properties else {
            let whereClause = try condition(
                table: table, query: query, filters: query.filter.map { [$0] } ?? [], builder: &builder)
            return (RecordColumns.recordsTable, whereClause)
        }
        let (rowConditions, propertyConditions) = (query.filter?.conjuncts ?? []).partitioned {
            !$0.propertyNames.contains { !SystemProperty.isSystemProperty($0) }
        }
        let rows = try condition(table: table, query: query, filters: rowConditions, builder: &builder)
        var conditions: [String] = []
        for filter in propertyConditions {
            conditions.append(
                try FilterSQLTranslator.translate(filter, schema: nil, properties: properties, into: &builder))
        }
        return (
            "\(properties.source(rows: rows, into: &builder)) AS properties",
            conditions.isEmpty ? "TRUE" : conditions.joined(separator: " AND ")
        )
    }

    /// The `ORDER BY` terms of `query`: its keys (system columns, declared columns, or properties with missing values
    /// first on both databases), then `id` unless a key named it.
    private static func ordering(
        _ query: ListQuery, properties: ExtractedProperties?, dialect: SQLDialect, builder: inout SQLBuilder
    ) -> [(expression: String, direction: String)] {
        var order: [(expression: String, direction: String)] = []
        for key in query.orderBy {
            let direction = key.descending ? "DESC" : "ASC"
            if SystemProperty.isSystemProperty(key.property),
                let column = RecordColumns.column(forSystemProperty: key.property)
            {
                order.append((column, direction))
                if column == RecordColumns.id { return order }
            } else if let column = query.schema?.column(named: key.property) {
                order.append(DeclaredColumnSQL.orderingParts(column, descending: key.descending, dialect: dialect))
            } else {
                let expression = FilterSQLTranslator.orderingExpression(
                    forProperty: key.property, properties: properties, into: &builder)
                // PostgreSQL puts NULL last in ascending order; SQLite first. Make both put missing values first.
                let nulls = dialect == .postgres ? (key.descending ? " NULLS LAST" : " NULLS FIRST") : ""
                order.append((expression, direction + nulls))
            }
        }
        order.append((RecordColumns.id, appendsIDDescending(query.orderBy) ? "DESC" : "ASC"))
        return order
    }

    /// Whether the `id` that ends the order of `orderBy` (unless it names `id`) runs descending: after a descending
    /// `updatedAt` or `createdAt`, so that their index read backwards gives the order. No two records of a table share
    /// those stamps (``UpdatedAtClock``), so the direction of `id` after them changes no page; after other keys it
    /// orders ties, ascending.
    static func appendsIDDescending(_ orderBy: [OrderByKey]) -> Bool {
        guard let last = orderBy.last, last.descending else { return false }
        let column = RecordColumns.column(forSystemProperty: last.property)
        return column == RecordColumns.updatedAt || column == RecordColumns.createdAt
    }

    /// The columns of a stored record, as they are named in the records table.
    private static let recordColumns = columns + RecordColumns.body

    /// The rows of `table` that `query` may return, by its table, its deleted flag and `filters`, each a condition.
    static func condition(
        table: String, query: ListQuery, filters: [FilterExpression], builder: inout SQLBuilder
    ) throws(FilterTranslationError) -> String {
        // A table with declared columns names itself as its partial indexes do, so that the database can use them.
        var conditions = [
            query.schema == nil
                ? "\(RecordColumns.tableName) = \(builder.bind(.text(table)))" : DeclaredColumnSQL.tableCondition(table)
        ]
        if !query.includeDeleted { conditions.append("\(RecordColumns.deleted) = FALSE") }
        for filter in filters {
            conditions.append(try FilterSQLTranslator.translate(filter, schema: query.schema, into: &builder))
        }
        return conditions.joined(separator: " AND ")
    }
}

extension FilterExpression {
    /// The expressions joined by `and` at the top of this one, left to right: itself when it is no `and`.
    var conjuncts: [FilterExpression] {
        guard case .binary(.and, let left, let right) = self else { return [self] }
        return left.conjuncts + right.conjuncts
    }
}

extension Array {
    /// The elements for which `belongsFirst` holds, then the others, each in their order.
    fileprivate func partitioned(by belongsFirst: (Element) -> Bool) -> ([Element], [Element]) {
        (filter(belongsFirst), filter { !belongsFirst($0) })
    }
}
