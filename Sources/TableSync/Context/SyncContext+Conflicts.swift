import SyncProtocol

extension SyncContext {
    /// The conflicts waiting for a decision, by table and id.
    /// - Throws: ``StoreError/invalidJSONFile(file:error:)`` naming a conflict file that does not parse.
    public func conflicts() throws -> [ConflictRecord] {
        try conflictFiles.all()
    }

    /// The records with a conflict waiting.
    func conflictKeys() throws -> [RecordKey] {
        try conflictFiles.keys()
    }

    /// Keeps `conflict` under `conflicts/` (written by the actor, so a push and a resolve never race on one file).
    func writeConflict(_ conflict: ConflictRecord) throws {
        try conflictFiles.write(conflict)
    }

    /// Settles the conflict on `key`; the next push sends what remains.
    /// - Throws: ``StoreError/readOnly`` on a read-only context; ``StoreError/noConflict(_:)`` when
    ///   no conflict waits for `key`; ``StoreError/operationRejected(table:id:reason:)`` when `keepLocal` has no
    ///   version to send the local side on; ``FileSystemError`` when the disk fails.
    public func resolve(_ key: RecordKey, _ resolution: ConflictResolution) throws {
        try requireWritable()
        defer { spareFiles.finishRunBlocking() }
        guard let conflict = try conflicts().first(where: { $0.key == key }) else {
            throw StoreError.noConflict(key)
        }
        let pending = journal.pending(key)
        // Checked only where it is used: discarding needs nothing of a conflict file whose copy was broken by hand.
        func serverCopy() throws -> ServerRecord? {
            try conflict.serverRecord(file: layout.relative(conflictFiles.path(key)))
        }
        switch resolution {
        case .keepLocal:
            guard let queued = pending else { break }
            let kept = conflict.isVersionConflict ? try conflict.keepingLocal(queued, server: serverCopy()) : queued
            guard var operation = kept else {
                // Keeping a delete of a record the server deleted too: nothing is left to send.
                journal.remove(sequences: [queued.sequence])
                try saveJournal()
                break
            }
            // Whoever queued it, the decision was made here: this clone sends what it kept.
            if operation.origin != journal.origin {
                operation.origin = journal.origin
                operation.operationID = journal.origin.map { _ in Journal.newOperationID() }
            }
            journal.replace(operation)
            try saveJournal()
        case .takeServer:
            let server = try serverCopy()
            if let pending { journal.remove(sequences: [pending.sequence]) }
            try saveJournal()
            if let serverCopy = server, !serverCopy.deleted {
                _ = try applySynced(table: key.table, records: [serverCopy])
            } else if conflict.isVersionConflict {
                _ = try applySynced(table: key.table, records: [], removals: [key.id])
            }
        case .discard:
            if let pending { journal.remove(sequences: [pending.sequence]) }
            try saveJournal()
            _ = try applySynced(table: key.table, records: [], removals: [key.id])
        }
        try conflictFiles.remove(key)
    }
}
