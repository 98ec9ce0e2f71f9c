import SyncProtocol
import TableSyncStorage

/// What a push needs of an open store: its pending operations, the record files it sends and the synced writes
/// of the server's answers, and conflict files. ``SyncContext`` is the implementation; naming the push's
/// dependencies here keeps them few.
protocol PushingStore: Actor {
    /// The store's settings.
    nonisolated var settings: StoreSettings { get }
    /// The record files, read without waiting for the store (the push reads each file it sends).
    nonisolated var recordFiles: RecordFiles { get }
    /// Spare files, for staging write-backs ahead of their commit (``EncodedRecords/stage(in:)``).
    nonisolated var spareFiles: SpareFiles { get }
    /// Which clone of its git repository the store is: it sends only the operations it queued.
    nonisolated var clone: CloneIdentity.Lookup { get }
    /// Notes which pending operations the journal of `HEAD` holds: their acknowledgements are committed
    /// (``Acknowledgements``) when the push settles them.
    func noteCommittedOperations() throws
    /// The pending operations, in push order.
    var pendingOperations: [PendingOperation] { get }
    /// Turns hand edits in `scope` into operations, handing over up to `limit` of the files as read; deletes of more
    /// than half of a table are refused unless `allowingMassDelete`.
    func recordHandEdits(
        keepingReadsUpTo limit: Int, allowingMassDelete: Bool, scope: ScanScope
    ) throws -> (scan: LocalScan, reads: ReadRecordFiles)
    /// The operation pending on `key`, if any.
    func pendingOperation(_ key: RecordKey) -> PendingOperation?
    /// Queues local changes as journal operations; returns the files whose change the journal refused.
    func queue(_ changes: [LocalChange]) throws -> [RecordFileProblem]
    /// The records with a conflict waiting.
    func conflictKeys() throws -> [RecordKey]
    /// What `HEAD` holds for each of `keys`, as the records' own content; empty outside git.
    func committedContents(_ keys: [RecordKey]) throws -> [RecordKey: [String: JSONValue]]
    /// The server's copy of `version` of `key`'s record as git's history holds it, as the record's own content;
    /// `nil` when the history holds none, or outside git.
    func syncedCopy(_ key: RecordKey, version: String) throws -> [String: JSONValue]?
    /// Keeps a conflict under `conflicts/`.
    func writeConflict(_ conflict: ConflictRecord) throws
    /// Writes records as the server has them and marks them synced; removes those in `removals`.
    func applySynced(
        table: String, records: [ServerRecord], removals: [String],
        guard localGuard: SyncedRecordWriter.LocalGuard
    ) throws -> SyncedRecordWriter.Outcome
    /// ``applySynced(table:records:removals:guard:)`` with the records encoded, and perhaps staged, already.
    func applySynced(
        table: String, encoded: EncodedRecords, removals: [String],
        guard localGuard: SyncedRecordWriter.LocalGuard
    ) throws -> SyncedRecordWriter.Outcome
    /// Replaces the pending operation with `operation`'s sequence number, and saves the journal.
    func replaceOperation(_ operation: PendingOperation) throws
    /// Removes operations the server settled from the journal (its file is rewritten once, by ``saveJournal()``) and
    /// acknowledges them (``Acknowledgements``); records the hashes of the files whose content it applied
    /// (``AppliedFiles``).
    func finishOperations(_ sequences: Set<Int64>, appliedFiles: [RecordKey: String]) throws
    /// The record files whose content the server applied for this clone's pushes.
    func appliedFiles() -> AppliedFiles
    /// Writes `journal.jsonl` as the journal now is.
    func saveJournal() throws
}

/// What a pull needs of an open store beyond what its push needs: its query and watermark, and which records
/// have local operations.
protocol PullingStore: PushingStore {
    /// Throws unless `name` is one of the store's tables.
    func requireTable(_ name: String) throws
    /// The query to pull with: the registered one, created on first use, or an unsaved one without id.
    func resolveQuery(id: String?, table: String, filter: String?) throws -> PullQuery
    /// Saves `query` (its new watermark) to `queries.json`.
    func saveQuery(_ query: PullQuery) throws
    /// The ids of `table` with a pending operation.
    func pendingIDs(table: String) -> Set<String>
}
