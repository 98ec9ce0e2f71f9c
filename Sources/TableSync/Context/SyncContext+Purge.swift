import SyncProtocol
import TableSyncStorage

/// What `purge` removed and, with `force`, what it dropped.
public struct PurgeReport: Sendable, Equatable {
    /// Records removed from the store (their files and their index entries).
    public var removed = 0
    /// Pending operations dropped from the journal.
    public var droppedOperations = 0
    /// Changes made to record files by hand and not queued yet (created, edited or deleted files, and files still
    /// to compare with the server), dropped: the next pull brings back the server's copies.
    public var droppedHandChanges = 0
    /// Conflicts dropped from `conflicts/`.
    public var droppedConflicts = 0
}

extension SyncContext {
    /// Removes local records of `table` (those matching `filter`, or all). Refused while the table has
    /// pending operations or hand changes, unless `force`, which drops every one of them, whatever `filter` says
    /// (pending operations, edited, created and deleted files, and the table's conflicts): nothing of the table is
    /// left to send. The watermarks of the table's queries are reset, so the next pull brings back whatever still
    /// matches.
    /// - Throws: ``PurgeRefused`` when the table has changes not pushed and `force` is false;
    ///   ``StoreError/readOnly``, ``StoreError/unknownTable(_:)``; ``LocalQueryError`` when `filter` does not parse;
    ///   ``FileSystemError`` when the disk fails.
    @discardableResult
    public func purge(table: String, filter: String? = nil, force: Bool = false) throws -> PurgeReport {
        try requireWritable()
        try requireTable(table)
        let query = try LocalQuery(filter: filter, orderBy: nil)
        let git = try gitBaseline()
        let scan = try LocalChangeScanner(layout: layout, git: git).scan(tables: [table], journal: journal)
        let pending = journal.operations(inTable: table)
        // A stamped server copy the index did not know yet is no local change.
        let changes = scan.changes.filter { $0.kind != .serverCopy }
        if !force && !(pending.isEmpty && changes.isEmpty) {
            throw PurgeRefused(table: table, pendingChanges: pending.count + changes.count)
        }
        var report = PurgeReport()
        if force {
            journal.remove(sequences: Set(pending.map(\.sequence)))
            try saveJournal()
            report.droppedOperations = pending.count
            for key in try conflictFiles.keys() where key.table == table {
                try conflictFiles.remove(key)
                report.droppedConflicts += 1
            }
            report.droppedHandChanges = changes.count
        }
        var removals = query.apply(to: try records(table: table)).compactMap { $0[SystemProperty.id]?.stringValue }
        report.removed = removals.count
        // Every record a hand change touched is forgotten with its file, so that nothing of it is sent: a file
        // deleted by hand is no delete any more, an edited or created one is gone, and the pull brings back
        // whatever the server has.
        if force {
            let removed = Set(removals)
            removals += changes.map(\.id).filter { !removed.contains($0) }
        }
        _ = try applySynced(table: table, records: [], removals: removals)
        // The removed records' contents are among the spares now; a purge leaves none behind.
        try spareFiles.removeAll()
        if let tree = git?.trees[table] { try forgetCommittedCopies(of: table, tree: tree) }
        var registry = try queries()
        for (id, entry) in registry.queries where entry.table == table {
            registry.queries[id]?.updatedAt = nil
            registry.queries[id]?.lastID = nil
            registry.queries[id]?.skipped = [:]
        }
        try saveQueries(registry)
        return report
    }

    /// In git, makes the files of `table` that `HEAD`'s `tree` has and the purge removed no deletes for the next
    /// scan: the tree counts as reconciled, and the table's index as emptied on purpose (``GitState/purged``).
    private func forgetCommittedCopies(of table: String, tree: String) throws {
        var state = GitState.load(layout: layout)
        state.trees[table] = tree
        state.purged.insert(table)
        try state.save(layout: layout)
    }
}
