import SyncProtocol
import TableSyncStorage

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

    /// Settles the conflict on `key`; the next push sends what remains. Taking the server's side of a conflict
    /// that holds no copy of it (a record the server refused or failed on, or one set aside before sending) reads
    /// the server's copy first, with `options`; every other choice works offline.
    /// - Throws: ``StoreError/readOnly`` on a read-only context; ``StoreError/noConflict(_:)`` when
    ///   no conflict waits for `key`; ``StoreError/operationRejected(table:id:reason:)`` when `keepLocal` has no
    ///   version to send the local side on; ``SyncError`` when the server's copy must be read and cannot be (the
    ///   conflict then stays as it was); ``FileSystemError`` when the disk fails.
    public func resolve(
        _ key: RecordKey, _ resolution: ConflictResolution, options: SyncOptions = SyncOptions()
    ) async throws {
        try requireWritable()
        defer { spareFiles.finishRunBlocking() }
        guard let conflict = try conflicts().first(where: { $0.key == key }) else {
            throw StoreError.noConflict(key)
        }
        // Checked only where it is used: discarding needs nothing of a conflict file whose copy was broken by hand.
        func serverCopy() throws -> ServerRecord? {
            try conflict.serverRecord(file: layout.relative(conflictFiles.path(key)))
        }
        let fetched =
            resolution == .takeServer && conflict.server == nil && !conflict.recordIsGone
            ? try await readServerCopy(key, options: options) : nil
        // Read after the server answered: the journal may have changed while this actor waited.
        let pending = journal.pending(key)
        switch resolution {
        case .keepLocal:
            guard let queued = pending else { break }
            let kept = conflict.isVersionConflict ? try conflict.keepingLocal(queued, server: serverCopy()) : queued
            guard let operation = kept else {
                // Keeping a delete of a record the server deleted too: nothing is left to send.
                journal.remove(sequences: [queued.sequence])
                try saveJournal()
                break
            }
            // Whoever queued it, the decision was made here: this clone sends what it kept.
            journal.replace(operation.origin == journal.origin ? operation : operation.takenOver(by: journal.origin))
            try saveJournal()
        case .takeServer:
            let server = try fetched ?? serverCopy()
            if let pending { journal.remove(sequences: [pending.sequence]) }
            try saveJournal()
            if let serverCopy = server, !serverCopy.deleted {
                _ = try applySynced(table: key.table, records: [serverCopy])
            } else {
                // The server has no such record, or keeps it deleted: the local file goes too.
                _ = try applySynced(table: key.table, records: [], removals: [key.id])
            }
        case .discard:
            if let pending { journal.remove(sequences: [pending.sequence]) }
            try saveJournal()
            _ = try applySynced(table: key.table, records: [], removals: [key.id])
        }
        try conflictFiles.remove(key)
    }

    /// The server's copy of `key`, deleted or not, or `nil` when it has no such record.
    private func readServerCopy(_ key: RecordKey, options: SyncOptions) async throws -> ServerRecord? {
        let connection = ServerConnection(settings: settings, layout: layout, options: options)
        return try await connection.client(table: key.table).serverCopy(table: key.table, id: key.id)
    }
}
