import Foundation
import SyncProtocol
import TableSyncStorage

/// Local changes: through the library (`insert`, `update`, `delete`), and by hand (the scan that turns edited
/// files into operations). Each writes the record file and queues its operation in the journal.
extension SyncContext {
    func insert(_ record: [String: JSONValue], table: String) throws -> [String: JSONValue] {
        try requireWritable()
        try requireTable(table)
        var record = SyncedMark.removed(from: record)
        for name in SystemProperty.serverManaged { record[name] = nil }
        let id: String
        switch record[SystemProperty.id] {
        case nil, .null?:
            id = UUID().uuidString.lowercased()
            record[SystemProperty.id] = .string(id)
        case .string(let given)?:
            id = given
        case let other?:
            throw StoreError.invalidRecord(table: table, reason: "\"id\" must be a string, found \(other.typeName)")
        }
        if let problem = RecordID.problem(with: id) { throw StoreError.invalidRecordID(id, reason: problem) }
        if let problem = RecordNesting.problem(with: record) {
            throw StoreError.invalidRecord(table: table, reason: problem)
        }
        if recordFiles.exists(table: table, id: id) { throw StoreError.recordExists(table: table, id: id) }
        if case .reject(let reason) = OperationCollapse.outcome(
            pending: journal.pending(RecordKey(table: table, id: id))?.kind, new: .insert)
        {
            throw StoreError.operationRejected(table: table, id: id, reason: reason)
        }
        // The file first: if the run dies before the journal line is written, the next scan finds a
        // hand-created file and queues the insert then. The reverse order could queue an insert of nothing.
        try recordFiles.write(record, table: table, id: id)
        try journal.enqueue(.insert, table: table, id: id, baseVersion: nil)
        try saveJournal()
        return record
    }

    func update(_ record: [String: JSONValue], table: String) throws -> [String: JSONValue] {
        try requireWritable()
        try requireTable(table)
        guard let id = record[SystemProperty.id]?.stringValue else {
            throw StoreError.invalidRecord(table: table, reason: "an update needs the record's \"id\" as a string")
        }
        if let problem = RecordID.problem(with: id) { throw StoreError.invalidRecordID(id, reason: problem) }
        guard let existing = try recordFiles.load(table: table, id: id) else {
            throw StoreError.recordNotFound(table: table, id: id)
        }
        var updated = SyncedMark.removed(from: record)
        for name in SystemProperty.serverManaged { updated[name] = existing.record[name] }
        updated[SystemProperty.deleted] = nil
        if let problem = RecordNesting.problem(with: updated) {
            throw StoreError.invalidRecord(table: table, reason: problem)
        }
        if updated == SyncedMark.removed(from: existing.record) { return updated }
        if case .reject(let reason) = OperationCollapse.outcome(
            pending: journal.pending(RecordKey(table: table, id: id))?.kind, new: .update)
        {
            throw StoreError.operationRejected(table: table, id: id, reason: reason)
        }
        let baseVersion =
            try syncedVersion(table: table, id: id) ?? existing.record[SystemProperty.version]?.stringValue
        try recordFiles.write(updated, table: table, id: id)
        try journal.enqueue(.update, table: table, id: id, baseVersion: baseVersion)
        try saveJournal()
        return updated
    }

    func delete(id: String, table: String) throws {
        try requireWritable()
        try requireTable(table)
        if let problem = RecordID.problem(with: id) { throw StoreError.invalidRecordID(id, reason: problem) }
        guard let existing = try recordFiles.load(table: table, id: id) else {
            throw StoreError.recordNotFound(table: table, id: id)
        }
        if case .reject(let reason) = OperationCollapse.outcome(
            pending: journal.pending(RecordKey(table: table, id: id))?.kind, new: .delete)
        {
            throw StoreError.operationRejected(table: table, id: id, reason: reason)
        }
        let baseVersion =
            try syncedVersion(table: table, id: id) ?? existing.record[SystemProperty.version]?.stringValue
        try recordFiles.remove(table: table, id: id)
        try journal.enqueue(
            .delete, table: table, id: id, baseVersion: baseVersion,
            item: .object(SyncedMark.removed(from: existing.record)))
        try saveJournal()
    }

    func read(id: String, table: String) throws -> [String: JSONValue]? {
        try requireTable(table)
        guard RecordID.isValid(id) else { return nil }
        return try recordFiles.load(table: table, id: id).map { SyncedMark.removed(from: $0.record) }
    }

    /// Turns hand edits into journal operations (the first step of every push) and returns what was queued.
    /// Files with problems are skipped and returned in ``LocalScan/problems``. Files that must be compared with the
    /// server first (``LocalScan/uncompared``) and files in conflict with a pending delete are returned, not
    /// queued: the push settles them. Stamped server copies the index did not know are indexed.
    @discardableResult
    package func recordHandEdits() throws -> LocalScan {
        try recordHandEdits(keepingReadsUpTo: 0).scan
    }

    /// ``recordHandEdits()``, also handing over (up to `limit`) the files of the edits as the scan read them, so
    /// that the push that follows sends them without reading them again. Unless `allowingMassDelete`, deleting
    /// more than half of a table's records because their files are gone is refused (``MassDeleteRefused``). The
    /// scan looks at the files of `scope` (``ScanScope``).
    func recordHandEdits(
        keepingReadsUpTo limit: Int, allowingMassDelete: Bool = false, scope: ScanScope = .everything
    ) throws -> (scan: LocalScan, reads: ReadRecordFiles) {
        try requireWritable()
        var reads = ReadRecordFiles(limit: limit)
        let git = try gitBaseline()
        var scan = try LocalChangeScanner(layout: layout, git: git).scan(
            tables: settings.tables, journal: journal, scope: scope, keeping: &reads)
        try GitGuard.checkWorkTreeSettled(git)
        if !allowingMassDelete { try checkMassDelete(scan.changes) }
        scan.problems += try queue(scan.changes.filter { [.created, .modified, .deleted].contains($0.kind) })
        for (table, entries) in scan.serverCopyEntries() {
            try store.indexUnchanged(entries, table: table)
        }
        if !scan.reconciledTrees.isEmpty {
            var state = GitState.load(layout: layout)
            state.trees.merge(scan.reconciledTrees) { _, new in new }
            try state.save(layout: layout)
        }
        return (scan, reads)
    }

    /// Refuses deletes of more than half of a table's records (``MassDeleteBrake/refuses(removing:of:)``): an
    /// `rm` of the wrong directory, or a checkout that removed files, is not sent.
    private func checkMassDelete(_ changes: [LocalChange]) throws {
        let deletes = Dictionary(grouping: changes.filter { $0.kind == .deleted || $0.kind == .missing }, by: \.table)
        for (table, deleted) in deletes.sorted(by: { $0.key < $1.key }) {
            let records = try recordFiles.count(table: table) + deleted.count
            if MassDeleteBrake.refuses(removing: deleted.count, of: records) {
                throw MassDeleteRefused(table: table, removing: deleted.count, localRecords: records, side: .push)
            }
        }
    }

    /// Queues `changes` as journal operations (created → insert, modified → update on its base version, deleted →
    /// delete) and saves the journal. A change the journal refuses becomes a problem of its file.
    func queue(_ changes: [LocalChange]) throws -> [RecordFileProblem] {
        var problems: [RecordFileProblem] = []
        for change in changes {
            let kind: PendingOperation.Kind
            switch change.kind {
            case .created: kind = .insert
            case .modified: kind = .update
            case .deleted: kind = .delete
            case .uncompared, .serverCopy, .removedByGit, .missing, .deleteConflict: continue
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
                try journal.enqueue(
                    kind, table: change.table, id: change.id, baseVersion: change.baseVersion, item: item)
            } catch let error as StoreError {
                problems.append(
                    RecordFileProblem(path: "tables/\(change.table)/\(change.fileName)", reason: "\(error)"))
            }
        }
        try saveJournal()
        return problems
    }
}
