import SyncProtocol
import TableSyncStorage

/// What `tablesync status` reports: like `git status`, what would go to the server and what needs a person.
public struct StoreStatus: Sendable, Equatable {
    /// The server the store syncs with.
    package var remote: String
    /// Operations in the journal that this store sends, in push order.
    public var pending: [PendingOperation]
    /// Operations another clone of the store queued (they came with a merge): that clone sends them.
    package var queuedElsewhere: [PendingOperation]
    /// Hand edits not in the journal yet (push records them first), files to compare with the server first, and
    /// files in conflict with a pending delete.
    public var handEdits: [LocalChange]
    /// Per table, how many files hold stamped copies of the server's records that the stat index does not know
    /// yet (a clone, a lost cache): indexed by the next push, nothing sent.
    package var serverCopies: [String: Int]
    /// Files that are skipped until someone fixes them.
    public var problems: [RecordFileProblem]
    /// Files editors and merge tools left beside record files, ignored (``LocalScan/leftovers``).
    package var leftovers: [String] = []
    /// Records whose operation the server refused, waiting for `tablesync resolve`.
    public var conflicts: [RecordKey]
    /// Records the server sent that the store cannot hold, skipped by the pulls of `queries.json`.
    package var skippedServerRecords: [SkippedServerRecord]
    /// Record files looked at, and how many of them had to be read because their `stat` changed.
    package var filesSeen: Int
    /// Of ``filesSeen``, the files read and hashed because their `stat` changed since the last sync.
    package var filesHashed: Int

    /// What git's state means for the next push, pull or sync (a merge under way, `HEAD` behind the last sync, the
    /// merge driver not set up in this clone), one sentence each.
    package var gitWarnings: [String] = []

    /// `true` when there is nothing to push and nothing to look at.
    public var isClean: Bool {
        pending.isEmpty && queuedElsewhere.isEmpty && handEdits.isEmpty && problems.isEmpty && conflicts.isEmpty
    }
}
