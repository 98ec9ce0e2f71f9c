/// Several sources of index lines, each in increasing file-name order, read as one in that order: for a name
/// that several mention, the newest source's line wins. What a merge of runs writes, and what a scan walks beside
/// the sorted directory listing.
struct IndexItemMerge {
    /// One source: a run read from disk, or lines held in memory (the log's), with the time from which their
    /// entries are racily clean.
    enum Source {
        case run(IndexRun)
        case lines([StatIndexLine.Item], modifiedNanoseconds: Int64)
    }

    private enum Cursor {
        case run(IndexRun.Reader)
        case lines([StatIndexLine.Item], next: Int)

        mutating func next() throws -> StatIndexLine.Item? {
            switch self {
            case .run(var reader):
                let item = try reader.next()
                self = .run(reader)
                return item
            case .lines(let items, let next):
                guard next < items.count else { return nil }
                self = .lines(items, next: next + 1)
                return items[next]
            }
        }
    }

    /// Newest first.
    private var cursors: [Cursor]
    private var heads: [StatIndexLine.Item?]
    private let racyFrom: [Int64]

    /// Merges `sources`, given newest first.
    init(newestFirst sources: [Source]) throws {
        cursors = sources.map { source in
            switch source {
            case .run(let run): .run(IndexRun.Reader(run))
            case .lines(let items, _): .lines(items, next: 0)
            }
        }
        racyFrom = sources.map { source in
            switch source {
            case .run(let run): run.modifiedNanoseconds
            case .lines(_, let time): time
            }
        }
        heads = []
        for index in cursors.indices { heads.append(try cursors[index].next()) }
    }

    /// The next name's line from the newest source that has it, its entry checked for being racily clean
    /// against that source (``StatIndex/Entry/checked(racyFrom:)``); `nil` after the last.
    mutating func next() throws -> StatIndexLine.Item? {
        var winner: Int?
        for index in heads.indices {
            guard let head = heads[index] else { continue }
            // Strictly smaller: on a tie the newer (earlier) source stays the winner.
            if winner == nil || head.fileName < heads[winner!]!.fileName { winner = index }
        }
        guard let winner, var item = heads[winner] else { return nil }
        item.entry = item.entry?.checked(racyFrom: racyFrom[winner])
        for index in heads.indices where heads[index]?.fileName == item.fileName {
            heads[index] = try cursors[index].next()
        }
        return item
    }
}
