import SyncProtocol
import TableSyncStorage

/// A change to a record file that the journal does not hold yet, as a scan of the store finds it.
public struct LocalChange: Sendable, Equatable {
    /// What happened to the file.
    public enum Kind: String, Sendable {
        /// A new file without the server's system properties: an insert.
        case created
        /// A file changed since it was synced, on the version it was synced at: an update on that version.
        case modified
        /// A file gone that the store synced, or that `HEAD` has: a delete on its version.
        case deleted
        /// A file that carries the server's system properties at a version this store did not sync and is not
        /// stamped as the server's copy of it (`SyncedMark`): a fresh clone, a restore or a lost `.tablesync/`
        /// of a file an earlier version wrote or a person changed, or a git merge, checkout, rebase or revert that
        /// put another copy there. Not an edit until compared with the server, which the next push does first.
        case uncompared
        /// A file stamped as the server's copy of the version it names that the stat index does not know yet (a
        /// clone, a lost cache, a record a merge brought): indexed by the next push, nothing sent.
        case serverCopy
        /// A file the store synced that a git command removed (`HEAD` no longer has it: a merge brought the
        /// record's deletion, a switch or checkout left it behind). Compared with the server by the next push:
        /// nothing is sent for a record the server deleted, and one that another branch merely lacks is brought
        /// back rather than deleted.
        case removedByGit
        /// A file `HEAD` has that is gone while the stat index does not know it (a fresh clone, a lost cache, a
        /// record a merge brought): a hand delete, or the removal by a run whose index was lost. Also a file the
        /// index knows that this branch's own commits removed since it forked from the last sync's commit (a
        /// committed `git rm`). Compared with the server by the next push: a delete on that version, unless the
        /// server deleted the record too.
        case missing
        /// A file that holds content while a delete of its record is pending (a delete merged over an edit): a
        /// conflict for a person, never sent and never removed by the push.
        case deleteConflict
    }

    /// Whether the file was created, modified or deleted.
    public var kind: Kind
    /// The table of the record.
    public var table: String
    /// The record's id (from the file name).
    public var id: String
    /// The file name under `tables/<table>/`.
    package var fileName: String
    /// The server version the change was made on (from the index, or `HEAD`'s copy), for modified and deleted
    /// records; for an uncompared one, the version this store last synced, if any.
    package var baseVersion: String?

    /// The record this change is about.
    package var key: RecordKey { RecordKey(table: table, id: id) }
}

/// What a scan of the record files found.
package struct LocalScan: Sendable, Equatable {
    /// Changes made by hand that are not in the journal yet, by table and file name.
    package var changes: [LocalChange] = []
    /// Files that cannot be used, with the reason; they are skipped and nothing else is held back.
    package var problems: [RecordFileProblem] = []
    /// Files editors and merge tools left beside record files (``LeftoverFileName``), as `tables/<table>/<name>`:
    /// ignored, with a notice.
    package var leftovers: [String] = []
    /// How many files were read and hashed because their `stat` changed (the rest cost one `stat` each).
    package var filesHashed = 0
    /// How many record files were looked at.
    package var filesSeen = 0
    /// Per table, the index entries of the files read and found to be stamped server copies
    /// (``LocalChange/Kind/serverCopy``).
    var serverCopies: [String: [StatIndex.Entry]] = [:]
    /// Per table, the files git's index vouched for, not read: server copies too (``IndexedListing/vouched``).
    var vouched: [String: VouchedFiles] = [:]

    /// How many files of each table are server copies, read or vouched for.
    var serverCopyCounts: [String: Int] {
        serverCopies.mapValues(\.count).merging(vouched.mapValues(\.count), uniquingKeysWith: +)
    }

    /// The index entries of every server copy found, read or vouched for, by table in name order.
    func serverCopyEntries() -> [(table: String, entries: [StatIndex.Entry])] {
        Set(serverCopies.keys).union(vouched.keys).sorted().map { table in
            // Both in name order: the index takes a whole table's entries in order without sorting them.
            (table, StatIndex.merged(serverCopies[table] ?? [], vouched[table]?.entries() ?? []))
        }
    }
    /// Where `HEAD` stood against the last sync's commit (``GitState/syncedHead``) when the scan ran.
    var headPosition = HeadPosition.unknown
    /// Per table, the tree of `HEAD` the scan reconciled (``GitState/trees``): saved once its changes are queued.
    var reconciledTrees: [String: String] = [:]

    /// The files not yet compared with the server: those that carry other versions, those git removed, and those
    /// missing that only `HEAD` knows.
    package var uncompared: [LocalChange] {
        changes.filter { [.uncompared, .removedByGit, .missing].contains($0.kind) }
    }
}
