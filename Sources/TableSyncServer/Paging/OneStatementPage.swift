import Synchronization

/// Which PostgreSQL pages are read in one statement rather than through a cursor (``CursorFetchSize``).
///
/// A cursor costs three round trips besides its fetches (`BEGIN`, `DECLARE`, `COMMIT`), and a small page takes two
/// or three fetches: on a busy machine every round trip is one more wait for a processor. So a small page (not a bulk
/// read, ``ReadWeight``) is read by one statement of `$top + 1` rows, unless its table is known to hold records larger
/// than ``largestRecord``. A page ends before `$top` when its records reach the page's bytes (``PageByteLimit``), and
/// PostgreSQL still sends the rest of the statement's rows, which the server drops; with records of at most
/// ``largestRecord`` bytes, the rows of a small page come to no more than one of the cursor's fetches. A table is
/// known to hold larger records once the server has read or written one in it (``LargeRecordTables``); one written by
/// another server, or before this one started, may thus be met in one statement, once.
enum OneStatementPage {
    /// The largest record, in bytes of its stored body, that a table may hold for its small pages to be read in one
    /// statement: as many as a small page asks for then move one cursor fetch's bytes.
    static let largestRecord = CursorFetchSize.bytesPerFetch / (ReadWeight.smallPage + 1)

    /// Whether the page `query` asks for is read in one statement, its table holding records larger than
    /// ``largestRecord`` or not.
    static func applies(to query: ListQuery, tableHoldsLargeRecords: Bool) -> Bool {
        !tableHoldsLargeRecords && !ReadWeight.isBulk(query)
    }
}

/// The tables in which this server has read or written a record larger than ``OneStatementPage/largestRecord``:
/// their pages are read through a cursor for as long as the server runs.
final class LargeRecordTables: Sendable {
    private let tables = Mutex<Set<String>>([])

    /// Whether the server has read or written such a record in `table` (its stored name).
    func contains(_ table: String) -> Bool {
        tables.withLock { $0.contains(table) }
    }

    /// Notes a record of `bodyBytes` read or written in `table`.
    func note(_ table: String, bodyBytes: Int) {
        guard bodyBytes > OneStatementPage.largestRecord else { return }
        _ = tables.withLock { $0.insert(table) }
    }
}
