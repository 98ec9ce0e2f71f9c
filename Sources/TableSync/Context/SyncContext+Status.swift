import SyncProtocol
import TableSyncStorage

extension SyncContext {
    /// The store's status. Reads only: nothing in the store changes.
    /// - Throws: ``StoreError`` when `queries.json` or a conflict file does not parse; ``FileSystemError`` when a
    ///   directory cannot be read. A record file that does not parse is no error: ``StoreStatus/problems`` lists it.
    public func status() throws -> StoreStatus {
        let baseline = try gitBaseline()
        let scan = try LocalChangeScanner(layout: layout, git: baseline).scan(tables: settings.tables, journal: journal)
        let skipped = try queries().sorted.flatMap { query in
            query.skipped.sorted { $0.key < $1.key }.map { id, reason in
                SkippedServerRecord(table: query.table, id: id, reason: reason)
            }
        }
        // Those read and those git's index vouched for (``LocalScan/serverCopyCounts``).
        let serverCopies = scan.serverCopyCounts
        let sender = clone.sender
        return StoreStatus(
            remote: settings.remote, pending: journal.operations.filter { $0.isSent(by: sender) },
            queuedElsewhere: journal.operations.filter { !$0.isSent(by: sender) },
            handEdits: scan.changes.filter { $0.kind != .serverCopy },
            serverCopies: serverCopies,
            problems: scan.problems, leftovers: scan.leftovers, conflicts: try conflictFiles.keys(),
            skippedServerRecords: skipped, filesSeen: scan.filesSeen, filesHashed: scan.filesHashed,
            gitWarnings: try GitGuard.warnings(baseline))
    }

    /// Checks the store's invariants (settings, queries, the journal against the record files, every record file,
    /// leftovers of interrupted runs) and returns what it found; changes nothing.
    package func verify() throws -> [VerificationFinding] {
        try StoreVerifier(layout: layout, settings: settings, journal: journal).verify()
    }
}
