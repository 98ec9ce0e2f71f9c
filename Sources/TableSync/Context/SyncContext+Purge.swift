import SyncProtocol
import TableSyncStorage

extension SyncContext {
    /// Removes local records of `table` (those matching `filter`, or all). Refused while the table has
    /// pending operations or hand edits, unless `force`, which drops them (and the table's conflicts). The
    /// watermarks of the table's queries are reset, so the next pull brings back whatever still matches.
    /// Returns how many records were removed.
    /// - Throws: ``PurgeRefused`` when the table has changes not pushed and `force` is false;
    ///   ``StoreError/readOnly``, ``StoreError/unknownTable(_:)``; ``LocalQueryError`` when `filter` does not parse;
    ///   ``FileSystemError`` when the disk fails.
    @discardableResult
    public func purge(table: String, filter: String? = nil, force: Bool = false) throws -> Int {
        try requireWritable()
        try requireTable(table)
        let query = try LocalQuery(filter: filter, orderBy: nil)
        let scan = try LocalChangeScanner(layout: layout, git: try gitBaseline()).scan(
            tables: [table], journal: journal)
        let pending = journal.operations(inTable: table)
        // A stamped server copy the index did not know yet is no local change.
        let changes = scan.changes.filter { $0.kind != .serverCopy }
        if !force && !(pending.isEmpty && changes.isEmpty) {
            throw PurgeRefused(table: table, pendingChanges: pending.count + changes.count)
        }
        if force {
            journal.remove(sequences: Set(pending.map(\.sequence)))
            try saveJournal()
            for key in try conflictFiles.keys() where key.table == table { try conflictFiles.remove(key) }
        }
        let doomed = query.apply(to: try records(table: table)).compactMap { $0[SystemProperty.id]?.stringValue }
        var removals = doomed
        if force { removals += scan.changes.filter { $0.kind == .created || $0.kind == .uncompared }.map(\.id) }
        _ = try applySynced(table: table, records: [], removals: removals)
        // The removed records' contents are among the spares now; a purge leaves none behind.
        try spareFiles.removeAll()
        var registry = try queries()
        for (id, entry) in registry.queries where entry.table == table {
            registry.queries[id]?.updatedAt = nil
            registry.queries[id]?.lastID = nil
            registry.queries[id]?.skipped = [:]
        }
        try saveQueries(registry)
        return removals.count
    }
}
