/// How both repositories turn the rows of a page query into a page: the query asks for `$top + 1` rows; at most
/// `$top` go to the collector, and a row after them only tells that more records follow. A collector that ends the
/// page early ends the reading there, so rows after the page are never decoded.
struct PageReading<Collector: PageCollector>: Sendable {
    private var collector: Collector
    private let top: Int
    private var taken = 0
    private var hasMore = false
    private var endedEarly = false

    init(collector: Collector, top: Int) {
        self.collector = collector
        self.top = top
    }

    /// The rows still worth reading: the page's remaining records and the one row that tells whether more follow.
    var rowsWanted: Int { max(0, top + 1 - taken) }

    /// Reads the next row, decoded by `decode` only when the page may take it; returns `false` once the page is
    /// complete and no further row is worth reading.
    mutating func read(_ decode: () throws -> StoredRecord) rethrows -> Bool {
        guard taken < top else {
            hasMore = true
            return false
        }
        guard collector.take(try decode()) else {
            hasMore = true
            endedEarly = true
            return false
        }
        taken += 1
        return true
    }

    /// The page read, with `totalCount` when it was counted.
    func page(totalCount: Int?) -> ListedPage<Collector> {
        ListedPage(
            collected: collector, recordCount: taken, hasMore: hasMore, endedEarly: endedEarly, totalCount: totalCount)
    }
}
