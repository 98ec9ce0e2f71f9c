/// The pure rules of the stat index's runs (``IndexRun``): which run files hold the index, and when runs merge.
enum IndexRunPlan {
    /// Of the run files found, by their sequences: those that hold the index, oldest first, and those that a
    /// merge replaced (their sequences lie within a live run's: the merge's output was renamed into place, and
    /// the process died before it removed them). `nil` when two runs overlap otherwise, which no run of this
    /// version leaves: the index cannot be trusted.
    static func live(_ found: [ClosedRange<Int>]) -> (live: [ClosedRange<Int>], replaced: [ClosedRange<Int>])? {
        var live: [ClosedRange<Int>] = []
        var replaced: [ClosedRange<Int>] = []
        for range in found.sorted(by: { ($0.lowerBound, -$0.upperBound) < ($1.lowerBound, -$1.upperBound) }) {
            guard let last = live.last, range.lowerBound <= last.upperBound else {
                live.append(range)
                continue
            }
            guard range.upperBound <= last.upperBound else { return nil }
            replaced.append(range)
        }
        return (live, replaced)
    }

    /// How many of the newest runs to merge into one now, given each live run's line count, oldest first: the
    /// newest runs while the run before them holds no more lines than they do together (0 when fewer than two).
    /// Runs therefore at least double in size towards the oldest, so there are at most about log2(lines /
    /// flush size) of them, and a line is rewritten about as many times over the life of the store.
    static func mergeCount(itemCounts: [Int]) -> Int {
        var count = 1
        var newer = itemCounts.last ?? 0
        while count < itemCounts.count {
            let older = itemCounts[itemCounts.count - 1 - count]
            guard older <= newer else { break }
            newer += older
            count += 1
        }
        return count >= 2 ? count : 0
    }
}
