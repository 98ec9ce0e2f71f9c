import SyncProtocol

/// The three-way merge of `queries.json`: a pure function, tested alone.
///
/// - A query on one side only is kept (added there), unless the other side removed it: a removal is a person's
///   decision, a watermark that moved is a sync's.
/// - A query on both sides whose table and filter agree keeps the older watermark of the two: the next pull then
///   re-reads what the other side pulled past (files that are already as the server has them are not rewritten),
///   and never skips a record. Skipped server records are joined.
/// - A query whose table or filter both sides changed differently is a conflict.
enum QueriesMerge {
    struct Result: Equatable {
        var ours: QueryRegistry
        var theirs: QueryRegistry
        var conflicts: [String]
    }

    static func merge(base: QueryRegistry?, ours: QueryRegistry, theirs: QueryRegistry) -> Result {
        var mergedOurs = QueryRegistry()
        var mergedTheirs = QueryRegistry()
        var conflicts: [String] = []
        let ids = Set(ours.queries.keys).union(theirs.queries.keys)
        for id in ids.sorted() {
            let original = base?.queries[id]
            switch (ours.queries[id], theirs.queries[id]) {
            case let (mine?, other?):
                if let joined = join(mine, other, base: original) {
                    mergedOurs.queries[id] = joined
                    mergedTheirs.queries[id] = joined
                } else {
                    conflicts.append(id)
                    mergedOurs.queries[id] = mine
                    mergedTheirs.queries[id] = other
                }
            case let (only?, nil), let (nil, only?):
                // Kept when it is new; gone when the other side removed it.
                if original == nil {
                    mergedOurs.queries[id] = only
                    mergedTheirs.queries[id] = only
                }
            case (nil, nil):
                break
            }
        }
        return Result(ours: mergedOurs, theirs: mergedTheirs, conflicts: conflicts)
    }

    /// One query from both sides: the definition both agree on (or the one only one side changed), with the older
    /// watermark; `nil` when both changed the definition differently.
    static func join(_ mine: PullQuery, _ other: PullQuery, base: PullQuery?) -> PullQuery? {
        func definition(_ query: PullQuery) -> [String?] { [query.table, query.filter] }
        var joined: PullQuery
        if definition(mine) == definition(other) {
            joined = isOlder(mine, than: other) ? mine : other
        } else if let base, definition(other) == definition(base) {
            // Our side redefined the query: its watermark belongs to the new definition.
            joined = mine
        } else if let base, definition(mine) == definition(base) {
            joined = other
        } else {
            return nil
        }
        if definition(mine) == definition(other) {
            joined.skipped = mine.skipped.merging(other.skipped) { first, _ in first }
        }
        return joined
    }

    /// Whether `query`'s watermark is not after `other`'s. No watermark is before any; at one instant, a cursor
    /// without a last id is past every id of that instant (the next page asks `updatedAt gt`).
    static func isOlder(_ query: PullQuery, than other: PullQuery) -> Bool {
        guard let mine = query.updatedAt.flatMap(Timestamp.init(parsing:)) else { return true }
        guard let theirs = other.updatedAt.flatMap(Timestamp.init(parsing:)) else { return false }
        if mine != theirs { return mine < theirs }
        switch (query.lastID, other.lastID) {
        case (nil, _): return other.lastID == nil
        case (_?, nil): return true
        case let (mineID?, theirID?): return mineID <= theirID
        }
    }
}
