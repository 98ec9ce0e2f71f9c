import SyncProtocol
import TableSyncStorage

/// A query over the records of one local table: `$filter`, `$orderby`, `$skip` and `$top`, evaluated with
/// SyncProtocol's `FilterEvaluator` so that a local query means what the same query means on the server.
public struct LocalQuery: Sendable, Equatable {
    /// Records must match this filter (all records when `nil`).
    package var filter: FilterExpression?
    /// Sort keys; `id` always breaks ties, so the order is total.
    package var orderBy: [OrderByKey]
    /// Records to skip after sorting.
    package var skip: Int
    /// The most records to return (`nil`: all).
    package var top: Int?

    /// A query from parsed parts: every record, in id order, unless told otherwise.
    public init(filter: FilterExpression? = nil, orderBy: [OrderByKey] = [], skip: Int = 0, top: Int? = nil) {
        self.filter = filter
        self.orderBy = orderBy
        self.skip = skip
        self.top = top
    }

    /// Builds a query from OData text, with errors that name the option and the column.
    /// - Throws: ``LocalQueryError`` naming the option and the position when `filter` or `orderBy` does not parse.
    public init(filter: String?, orderBy: String?, skip: Int = 0, top: Int? = nil) throws {
        var parsedFilter: FilterExpression?
        if let filter {
            do {
                parsedFilter = try FilterParser.parse(filter)
            } catch let error as FilterParseError {
                throw LocalQueryError(reason: "$filter \(error)")
            }
        }
        var keys: [OrderByKey] = []
        if let orderBy {
            do {
                keys = try OrderByKey.parseList(orderBy)
            } catch {
                throw LocalQueryError(reason: error.reason)
            }
        }
        guard skip >= 0 else { throw LocalQueryError(reason: "$skip must not be negative") }
        if let top, top < 0 { throw LocalQueryError(reason: "$top must not be negative") }
        self.init(filter: parsedFilter, orderBy: keys, skip: skip, top: top)
    }

    /// The properties the query's `$filter` and `$orderby` name that none of `records` holds, each once, in the order
    /// they first appear: a typo, or a string written without its quotes (`complete eq flase` compares two
    /// properties). The system properties count as held, since a record may lack `deleted` or `version`; without
    /// records there is nothing to judge by, and none is unknown.
    package func unknownPropertyNames(in records: [[String: JSONValue]]) -> [String] {
        guard !records.isEmpty else { return [] }
        var seen: Set<String> = []
        let named = (filter?.propertyNames ?? []) + orderBy.map(\.property)
        return named.filter { name in
            seen.insert(name).inserted && !SystemProperty.isSystemProperty(name)
                && !records.contains { $0[name] != nil }
        }
    }

    /// Applies the query to `records`.
    package func apply(to records: [[String: JSONValue]]) -> [[String: JSONValue]] {
        var selected = records
        if let filter { selected = selected.filter { FilterEvaluator.matches(filter, record: $0) } }
        let keys = orderBy + [OrderByKey(property: SystemProperty.id)]
        selected.sort { left, right in
            for key in keys {
                let order = LocalValueOrder.compare(left[key.property] ?? .null, right[key.property] ?? .null)
                if order != 0 { return key.descending ? order > 0 : order < 0 }
            }
            return false
        }
        let start = min(skip, selected.count)
        let end = top.map { min(start + $0, selected.count) } ?? selected.count
        return Array(selected[start..<end])
    }
}

/// A query given in text was wrong.
public struct LocalQueryError: CategorizedError, Equatable {
    /// What is wrong, naming the option.
    package let reason: String
    /// Always ``FailureKind/usage``.
    public var kind: FailureKind { .usage }
    /// What does not parse, naming the option and the position.
    public var description: String { reason }
}

/// The order local queries sort values in: null, then booleans (false first), numbers, strings (by UTF-8
/// bytes), arrays and objects (by their canonical text). Ascending puts null first, as SQLite does.
enum LocalValueOrder {
    static func compare(_ left: JSONValue, _ right: JSONValue) -> Int {
        let leftRank = rank(left)
        let rightRank = rank(right)
        if leftRank != rightRank { return leftRank < rightRank ? -1 : 1 }
        switch (left, right) {
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
        case (.string(let a), .string(let b)):
            return a.utf8.elementsEqual(b.utf8) ? 0 : (a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1)
        case (.integer(let a), .integer(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        default:
            if let a = left.doubleValue, let b = right.doubleValue { return a == b ? 0 : (a < b ? -1 : 1) }
            let a = CanonicalJSON.encode(left, style: .compact)
            let b = CanonicalJSON.encode(right, style: .compact)
            return a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
        }
    }

    private static func rank(_ value: JSONValue) -> Int {
        switch value {
        case .null: return 0
        case .bool: return 1
        case .integer, .double: return 2
        case .string: return 3
        case .array: return 4
        case .object: return 5
        }
    }
}
