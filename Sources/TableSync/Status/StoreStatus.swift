import SyncProtocol

/// What `tablesync status` reports: like `git status`, what would go to the server and what needs a person.
public struct StoreStatus: Sendable, Equatable {
    /// The server the store syncs with.
    public var remote: String
    /// Operations in the journal, in push order.
    public var pending: [PendingOperation]
    /// Hand edits not in the journal yet (push records them first).
    public var handEdits: [LocalChange]
    /// Files that are skipped until someone fixes them.
    public var problems: [RecordFileProblem]
    /// Records whose operation the server refused, waiting for `tablesync resolve`.
    public var conflicts: [RecordKey]
    /// Records the server sent that the store cannot hold, skipped by the pulls of `queries.json`.
    public var skippedServerRecords: [SkippedServerRecord]
    /// Record files looked at, and how many of them had to be read because their `stat` changed.
    public var filesSeen: Int
    /// Of ``filesSeen``, the files read and hashed because their `stat` changed since the last sync.
    public var filesHashed: Int

    /// `true` when there is nothing to push and nothing to look at.
    public var isClean: Bool { pending.isEmpty && handEdits.isEmpty && problems.isEmpty && conflicts.isEmpty }
}

extension SyncContext {
    /// The store's status. Reads only: nothing in the store changes.
    public func status() throws -> StoreStatus {
        let scan = try LocalChangeScanner(layout: layout).scan(tables: settings.tables, journal: journal)
        let skipped = try queries().sorted.flatMap { query in
            query.skipped.keys.sorted().map { SkippedServerRecord(table: query.table, id: $0, reason: query.skipped[$0]!) }
        }
        return StoreStatus(remote: settings.remote, pending: journal.operations, handEdits: scan.changes,
                           problems: scan.problems, conflicts: try conflictFiles.keys(), skippedServerRecords: skipped,
                           filesSeen: scan.filesSeen, filesHashed: scan.filesHashed)
    }
}
