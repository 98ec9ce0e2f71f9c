import SyncProtocol
import TableSyncStorage

/// The journal of pending operations, as the context's users and its push and pull see it.
extension SyncContext {
    /// The pending operations in push order.
    public var pendingOperations: [PendingOperation] { journal.operations }

    /// The id that tells this clone's operations from those another clone queued
    /// (``PendingOperation/isSent(by:)``): `nil` outside git.
    package nonisolated var cloneSender: String? { clone.sender }

    /// Makes the pending operations that another clone of the store queued (those on `keys`, or all) this
    /// clone's, so that its next push sends them: for a clone that is gone, or whose commit will not come.
    /// Returns the operations taken over.
    @discardableResult
    package func takeOver(_ keys: Set<RecordKey>? = nil) throws -> [PendingOperation] {
        try requireWritable()
        var taken: [PendingOperation] = []
        for operation in journal.operations
        where !operation.isSent(by: clone.sender) && (keys?.contains(operation.key) ?? true) {
            let own = operation.takenOver(by: journal.origin)
            journal.replace(own)
            taken.append(own)
        }
        try saveJournal()
        return taken
    }

    /// The operation pending on `key`, if any.
    func pendingOperation(_ key: RecordKey) -> PendingOperation? {
        journal.pending(key)
    }

    /// The ids of `table` with a pending operation.
    func pendingIDs(table: String) -> Set<String> {
        Set(journal.operations(inTable: table).map(\.id))
    }

    /// Removes operations the server settled from the journal and saves it, deferring the rewrite of
    /// `journal.jsonl` to the end of the push (``Journal``). Their acknowledgements are written first: a run killed
    /// in between finds the operations acknowledged and drops them, where without them it would send them again. The
    /// hashes of the files the server applied are kept too (``AppliedFiles``).
    func finishOperations(_ sequences: Set<Int64>, appliedFiles: [RecordKey: String]) throws {
        let settled = journal.operations.filter { sequences.contains($0.sequence) }
        try AppliedFiles.record(appliedFiles, layout: layout)
        try Acknowledgements.record(settled, committed: committedOperationIDs, layout: layout)
        journal.remove(sequences: sequences)
        try journal.save(layout: layout, deferringRewrite: true)
    }

    /// The record files whose content the server applied for this clone's pushes (``AppliedFiles``).
    func appliedFiles() -> AppliedFiles { AppliedFiles.load(layout: layout) }

    /// Notes the ids of the operations that the journal of `HEAD` holds (``committedOperationIDs``).
    func noteCommittedOperations() throws {
        committedOperationIDs = []
        guard let repository = gitRepository() else { return }
        let answer = try repository.run(["show", "HEAD:./" + StoreLayout.journalFileName], allowing: [128])
        guard answer.status == 0 else { return }
        for line in answer.bytes.split(separator: UInt8(ascii: "\n")) {
            if let id = (try? JSONParser.parse(Array(line)))?["opid"]?.stringValue { committedOperationIDs.insert(id) }
        }
    }

    /// Replaces the pending operation with `operation`'s sequence number (a record brought back on the server
    /// goes out as an update on its new version), and saves the journal.
    func replaceOperation(_ operation: PendingOperation) throws {
        journal.replace(operation)
        try saveJournal()
    }

    /// Writes `journal.jsonl` as the journal now is.
    func saveJournal() throws { try journal.save(layout: layout) }
}
