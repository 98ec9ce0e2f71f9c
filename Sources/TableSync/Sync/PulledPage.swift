import SyncProtocol
import TableSyncStorage

/// One pulled page, sorted by what the pull does with each record: kept for its pending local operation, removed
/// (deleted on the server, or evicted: no longer matching the query), or written as the server has it.
struct PageChanges: Sendable, Equatable {
    /// Records to write, in page order.
    var writes: [ServerRecord] = []
    /// Ids of records the server deleted.
    var removals: [String] = []
    /// Ids of records that no longer match the query (only when evicting).
    var evictions: [String] = []
    /// Records left alone because a local operation on them waits to be pushed.
    var keptLocal = 0
    /// Records the server sent that the store cannot hold.
    var skipped: [SkippedServerRecord] = []
    /// The page's number in its pull, counting from 1.
    var page = 0
    /// The query with the watermark past this page, saved once the page is in place; `nil` when nothing is saved.
    var query: PullQuery?

    /// Sorts `records`: those in `pendingIDs` are kept, deleted ones removed, those that do not match
    /// `evictFilter` (when given) evicted, the rest written.
    init(_ records: [ServerRecord], pendingIDs: Set<String>, evictFilter: FilterExpression?) {
        for record in records {
            if pendingIDs.contains(record.id) {
                keptLocal += 1
            } else if record.deleted {
                removals.append(record.id)
            } else if let evictFilter, !FilterEvaluator.matches(evictFilter, record: record.properties) {
                evictions.append(record.id)
            } else {
                writes.append(record)
            }
        }
    }

    /// The changes of `page`, the pull's `number`th page of `table`: its records sorted as
    /// ``init(_:pendingIDs:evictFilter:)`` sorts them, and the items it holds that the store cannot hold.
    init(
        page: ServerPage, number: Int, table: String, pendingIDs: Set<String>, evictFilter: FilterExpression?
    ) {
        self.init(page.records, pendingIDs: pendingIDs, evictFilter: evictFilter)
        self.page = number
        skipped = page.refused.filter { !$0.deleted }.map {
            SkippedServerRecord(table: table, id: $0.id, reason: $0.reason)
        }
    }
}

/// How many records a pull removed so far, against how many the table held: it refuses to remove more than half
/// (``refuses(removing:of:)``, which the push's deletes of missing files obey too).
struct MassDeleteBrake: Sendable {
    /// Counted when the first removal arrives: most pulls remove nothing and need no directory listing.
    var localRecords: Int?
    var removedSoFar = 0

    /// Counts the files of `removals` that are present; throws ``MassDeleteRefused`` when, with those removed
    /// before, they make more than half of the table's records (of a table of 10 or more).
    mutating func admit(_ removals: [String], table: String, files: RecordFiles) throws {
        guard !removals.isEmpty else { return }
        let counted = try localRecords ?? files.count(table: table)
        localRecords = counted
        let present = files.existingCount(table: table, ids: removals)
        if Self.refuses(removing: removedSoFar + present, of: counted) {
            throw MassDeleteRefused(table: table, removing: removedSoFar + present, localRecords: counted)
        }
        removedSoFar += present
    }

    /// The rule: removing more than half of a table of 10 records or more is refused unless allowed.
    static func refuses(removing: Int, of records: Int) -> Bool {
        records >= 10 && removing * 2 > records
    }
}

/// What committing one page did: the store's outcome and the page's own counts, with what the pull carries from
/// page to page (the brake, the records so far).
struct PageCommit: Sendable {
    /// The page's number in its pull.
    let page: Int
    /// Records sorted out for their pending operation (``PageChanges/keptLocal``); those the write found edited by
    /// hand are in ``outcome``'s `skipped`.
    let keptLocal: Int
    /// Records the server sent that the store cannot hold.
    let skipped: [SkippedServerRecord]
    /// Evicted records whose file was there.
    var evicted = 0
    var outcome = SyncedRecordWriter.Outcome()
    /// The brake after this page's removals.
    var brake: MassDeleteBrake
    /// Records of the pull before this page, in every count.
    private let recordsBefore: Int

    /// The commit of `changes`, after the pull's `previous` page (`nil` for its first).
    init(_ changes: PageChanges, after previous: PageCommit?) {
        page = changes.page
        keptLocal = changes.keptLocal
        skipped = changes.skipped
        brake = previous?.brake ?? MassDeleteBrake()
        recordsBefore = previous?.recordsSoFar ?? 0
    }

    /// Records of the pull up to and with this page: written, removed, unchanged, kept or skipped.
    var recordsSoFar: Int {
        recordsBefore + outcome.written + outcome.removed + outcome.unchanged + keptLocal + outcome.skipped.count
            + skipped.count
    }
}

extension PullReport {
    /// Adds one committed page's counts.
    mutating func add(_ commit: PageCommit) {
        evicted += commit.evicted
        written += commit.outcome.written
        removed += commit.outcome.removed
        unchanged += commit.outcome.unchanged
        keptLocal += commit.keptLocal + commit.outcome.skipped.count
        skipped += commit.skipped
    }
}
