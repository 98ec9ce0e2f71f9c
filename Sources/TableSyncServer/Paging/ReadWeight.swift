import SyncProtocol

/// Which page reads are bulk reads: those that can keep the database and a processor busy for long, and so take
/// turns (``ReadAdmission``) instead of crowding out the small requests of interactive clients.
enum ReadWeight {
    /// The largest page that is not bulk: the protocol's default page in v3 (v2's is 50).
    static let smallPage = 100

    /// `true` for a page of more than ``smallPage`` records, or one whose `$filter` calls a function: the database
    /// evaluates it on every row it reads, and no index serves it.
    static func isBulk(_ query: ListQuery) -> Bool {
        query.top > smallPage || (query.filter.map(callsFunction) ?? false)
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
