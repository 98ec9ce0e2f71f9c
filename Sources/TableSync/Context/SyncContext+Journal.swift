import SyncProtocol

/// The journal of pending operations, as the context's users and its push and pull see it.
extension SyncContext {
    /// The pending operations in push order.
    public var pendingOperations: [PendingOperation] { journal.operations }

    /// The operation pending on `key`, if any.
    func pendingOperation(_ key: RecordKey) -> PendingOperation? {
        journal.pending(key)
    }

    /// The ids of `table` with a pending operation.
    func pendingIDs(table: String) -> Set<String> {
        Set(journal.operations(inTable: table).map(\.id))
    }

    /// Removes settled operations from the journal and saves it, deferring the rewrite of `journal.jsonl` to
    /// the end of the push (``Journal``).
    func finishOperations(_ sequences: Set<Int64>) throws {
        journal.remove(sequences: sequences)
        try journal.save(layout: layout, deferringRewrite: true)
    }

    /// Writes `journal.jsonl` as the journal now is.
    func saveJournal() throws { try journal.save(layout: layout) }
}
