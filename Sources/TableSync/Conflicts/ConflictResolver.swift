import SyncProtocol

/// How a person settles a conflict (`tablesync resolve`), as the Azure SDKs offer it.
public enum ConflictResolution: String, Sendable, CaseIterable {
    /// Keep the local change and send it again on top of the server's version (the SDKs' "update operation").
    case keepLocal = "keep-local"
    /// Drop the local change and take the server's copy (the SDKs' "cancel and update item").
    case takeServer = "take-server"
    /// Drop the local change and the local record (the SDKs' "cancel and discard item").
    case discard
}

extension SyncContext {
    /// Settles the conflict on `key`; the next push sends what remains.
    public func resolve(_ key: RecordKey, _ resolution: ConflictResolution) throws {
        try requireWritable()
        defer { spareFiles.finishRunBlocking() }
        guard let conflict = try conflicts().first(where: { $0.key == key }) else {
            throw StoreError.invalidRecord(table: key.table, reason: "no conflict waits for \(key)")
        }
        let pending = journal.pending(key)
        let serverCopy = conflict.server.flatMap { ServerRecord.isDeleted($0) ? nil : $0 }
        switch resolution {
        case .keepLocal:
            guard var operation = pending else { break }
            if conflict.isVersionConflict {
                guard let serverCopy, let version = serverCopy[SystemProperty.version]?.stringValue else {
                    throw StoreError.operationRejected(table: key.table, id: key.id,
                        reason: "the record was deleted on the server, so the local change has nothing to go on top of; take the server's side or discard the record instead")
                }
                if operation.kind == .insert { operation.kind = .update }
                operation.baseVersion = version
            }
            journal.replace(operation)
            try saveJournal()
        case .takeServer:
            if let pending { journal.remove(sequences: [pending.sequence]) }
            try saveJournal()
            if let serverCopy {
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
