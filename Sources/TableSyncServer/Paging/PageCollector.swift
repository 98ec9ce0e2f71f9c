/// Receives the records of a page in order, one at a time, as a repository reads them, and says where the page
/// ends: a page can end before `$top` records when its records would otherwise take too much memory.
package protocol PageCollector: Sendable {
    /// Takes `record` as the page's next record, or returns `false` when the page is full without it; the page
    /// then ends before `record`. A page's first record must always be taken.
    mutating func take(_ record: StoredRecord) -> Bool
}

/// A page as a repository read it: what its collector took, and what lies beyond.
package struct ListedPage<Collector: PageCollector>: Sendable {
    /// The collector, holding the page's records in its own form.
    package var collected: Collector
    /// How many records the page holds.
    package var recordCount: Int
    /// `true` when more records match after this page.
    package var hasMore: Bool
    /// `true` when the collector ended the page before `$top` records, with more records to come.
    package var endedEarly: Bool
    /// The number of matching records ignoring `$skip` and `$top`, when asked for.
    package var totalCount: Int?
}

/// Collects a page's records as they are, however many bytes they take: for callers that read records, not
/// answers (tests, tools).
package struct RecordList: PageCollector {
    /// The records taken, in order.
    package private(set) var records: [StoredRecord] = []

    package init() {}

    package mutating func take(_ record: StoredRecord) -> Bool {
        records.append(record)
        return true
    }
}

extension ListedPage where Collector == RecordList {
    /// The page's records, in order.
    package var records: [StoredRecord] { collected.records }
}
