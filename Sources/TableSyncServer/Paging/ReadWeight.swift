import SyncProtocol

/// Which page reads are bulk reads: those that can keep the database and a processor busy for long, and so take
/// turns (``ReadAdmission``) instead of crowding out the small requests of interactive clients.
enum ReadWeight {
    /// The largest page that is not bulk: the protocol's default page in v3 (v2's is 50).
    static let smallPage = 100

    /// `true` for a page of more than ``smallPage`` records, or of a read that asked for more (`$top`, which v3
    /// serves a page at a time: each page of a read of a thousand records is bulk, as the read is), one whose
    /// `$filter` calls a function (the database evaluates it on every row it reads, and no index serves it), or one
    /// in an order no index gives (``isIndexedOrder(_:schema:)``): the database reads and sorts every row the filter
    /// lets through to find the first few.
    static func isBulk(_ query: ListQuery) -> Bool {
        max(query.top, query.requestedTop ?? 0) > smallPage || (query.filter.map(callsFunction) ?? false)
            || !isIndexedOrder(query.orderBy, schema: query.schema)
    }

    /// `true` when an index of the records table gives rows in `orderBy`'s order, read forwards or backwards, with
    /// the `id` that ends it (``RecordQuerySQL/appendsIDDescending(_:)``): no order (or `id` first) is the primary
    /// key's, `updatedAt` and `createdAt` have indexes of their own, a declared column has its index; each followed
    /// by `id` in its own direction.
    static func isIndexedOrder(_ orderBy: [OrderByKey], schema: TableSchema?) -> Bool {
        guard let first = orderBy.first else { return true }
        let column = RecordColumns.column(forSystemProperty: first.property)
        if column == RecordColumns.id { return true }
        guard
            column == RecordColumns.updatedAt || column == RecordColumns.createdAt
                || (column == nil && schema?.column(named: first.property) != nil)
        else { return false }
        let next =
            orderBy.dropFirst().first
            ?? OrderByKey(property: SystemProperty.id, descending: RecordQuerySQL.appendsIDDescending([first]))
        return RecordColumns.column(forSystemProperty: next.property) == RecordColumns.id
            && next.descending == first.descending
    }

    private static func callsFunction(_ expression: FilterExpression) -> Bool {
        switch expression {
        case .literal, .property: return false
        case .function: return true
        case .unary(_, let operand): return callsFunction(operand)
        case .binary(_, let left, let right): return callsFunction(left) || callsFunction(right)
        case .in(let value, let list): return callsFunction(value) || list.contains(where: callsFunction)
        }
    }
}
