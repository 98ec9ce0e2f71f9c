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
                           problems: scan.problems, conflicts: try conflictKeys(), skippedServerRecords: skipped,
                           filesSeen: scan.filesSeen, filesHashed: scan.filesHashed)
    }

    /// Turns hand edits into journal operations (the first step of every push) and returns what was queued.
    /// Files with problems are skipped and returned in ``LocalScan/problems``.
    @discardableResult
    public func recordHandEdits() throws -> LocalScan {
        try recordHandEdits(keepingReadsUpTo: 0).scan
    }

    /// ``recordHandEdits()``, also handing over (up to `limit`) the files of the edits as the scan read them, so
    /// that the push that follows sends them without reading them again.
    func recordHandEdits(keepingReadsUpTo limit: Int) throws -> (scan: LocalScan, reads: ReadRecordFiles) {
        try requireWritable()
        var reads = ReadRecordFiles(limit: limit)
        let scan = try LocalChangeScanner(layout: layout).scan(tables: settings.tables, journal: journal, keeping: &reads)
        var problems = scan.problems
        for change in scan.changes {
            let kind: PendingOperation.Kind
            switch change.kind {
            case .created: kind = .insert
            case .modified: kind = .update
            case .deleted: kind = .delete
            }
            // The content of a file deleted by hand is gone (git still has it); the delete needs only the id
            // and the version it was made on.
            var item: JSONValue?
            if kind == .delete {
                var members: [String: JSONValue] = [SystemProperty.id: .string(change.id)]
                if let version = change.baseVersion { members[SystemProperty.version] = .string(version) }
                item = .object(members)
            }
            do {
                try journal.enqueue(kind, table: change.table, id: change.id, baseVersion: change.baseVersion, item: item)
            } catch let error as StoreError {
                problems.append(RecordFileProblem(path: "tables/\(change.table)/\(change.fileName)", reason: "\(error)"))
            }
        }
        try saveJournal()
        var result = scan
        result.problems = problems
        return (result, reads)
    }

    /// Writes records as the server has them and marks them synced; removes the records in `removals`.
    /// Pull and push write-back go through here.
    func applySynced(table: String, records: [[String: JSONValue]], removals: [String] = [],
                     guard localGuard: SyncedRecordWriter.LocalGuard = .none) throws -> SyncedRecordWriter.Outcome {
        try requireWritable()
        var index = try takeIndex(table)
        let outcome = try SyncedRecordWriter(layout: layout, spares: spareFiles).apply(table: table, records: records, removals: removals,
                                                                   guard: localGuard, index: &index)
        setIndex(index, for: table)
        return outcome
    }

    /// The records with a file under `conflicts/`.
    func conflictKeys() throws -> [RecordKey] {
        var keys: [RecordKey] = []
        for (table, status) in try FileSystem.listDirectory(layout.conflictsDirectory) where status.isDirectory {
            for (name, _) in try FileSystem.listDirectory(layout.conflictDirectory(table)) {
                if let id = RecordFileName.id(forFileName: name) { keys.append(RecordKey(table: table, id: id)) }
            }
        }
        return keys.sorted()
    }
}
