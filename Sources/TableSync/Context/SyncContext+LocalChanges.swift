import Foundation
import SyncProtocol

extension SyncContext {
    func insert(_ record: [String: JSONValue], table: String) throws -> [String: JSONValue] {
        try requireWritable()
        try requireTable(table)
        var record = record
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
        let path = layout.recordFile(table: table, id: id)
        if FileSystem.exists(path) { throw StoreError.recordExists(table: table, id: id) }
        if case .reject(let reason) = OperationCollapse.outcome(pending: journal.pending(RecordKey(table: table, id: id))?.kind, new: .insert) {
            throw StoreError.operationRejected(table: table, id: id, reason: reason)
        }
        // The file first: if the run dies before the journal line is written, the next scan finds a
        // hand-created file and queues the insert then. The reverse order could queue an insert of nothing.
        try writeRecordFile(record, table: table, id: id)
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
        guard let existing = try loadRecordFile(table: table, id: id) else { throw StoreError.recordNotFound(table: table, id: id) }
        var updated = record
        for name in SystemProperty.serverManaged { updated[name] = existing.record[name] }
        updated[SystemProperty.deleted] = nil
        if RecordFile.encode(updated) == existing.bytes { return updated }
        if case .reject(let reason) = OperationCollapse.outcome(pending: journal.pending(RecordKey(table: table, id: id))?.kind, new: .update) {
            throw StoreError.operationRejected(table: table, id: id, reason: reason)
        }
        let baseVersion = try syncedVersion(table: table, id: id) ?? existing.record[SystemProperty.version]?.stringValue
        try writeRecordFile(updated, table: table, id: id)
        try journal.enqueue(.update, table: table, id: id, baseVersion: baseVersion)
        try saveJournal()
        return updated
    }

    func delete(id: String, table: String) throws {
        try requireWritable()
        try requireTable(table)
        if let problem = RecordID.problem(with: id) { throw StoreError.invalidRecordID(id, reason: problem) }
        guard let existing = try loadRecordFile(table: table, id: id) else { throw StoreError.recordNotFound(table: table, id: id) }
        if case .reject(let reason) = OperationCollapse.outcome(pending: journal.pending(RecordKey(table: table, id: id))?.kind, new: .delete) {
            throw StoreError.operationRejected(table: table, id: id, reason: reason)
        }
        let baseVersion = try syncedVersion(table: table, id: id) ?? existing.record[SystemProperty.version]?.stringValue
        var batch = DurableFileBatch()
        batch.remove(layout.recordFile(table: table, id: id))
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
        try journal.enqueue(.delete, table: table, id: id, baseVersion: baseVersion, item: .object(existing.record))
        try saveJournal()
    }

    func read(id: String, table: String) throws -> [String: JSONValue]? {
        try requireTable(table)
        guard RecordID.isValid(id) else { return nil }
        return try loadRecordFile(table: table, id: id)?.record
    }

    /// The record file of `id`, checked; `nil` when there is none, an error when it is broken.
    nonisolated func loadRecordFile(table: String, id: String) throws -> RecordFile.Loaded? {
        let path = layout.recordFile(table: table, id: id)
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(path)
        } catch let error as FileSystemError where error.isNotFound {
            return nil
        }
        switch RecordFile.check(bytes: bytes, fileName: RecordFileName.fileName(for: id), relativePath: layout.relative(path)) {
        case .success(let loaded): return loaded
        case .failure(let problem): throw StoreError.brokenRecordFile(problem)
        }
    }

    /// The record file of `id` as the push sends it, and what the write-back needs to know it is unchanged:
    /// `scanned` (the copy the scan read) when its `stat` says the file has not changed since, else the file read
    /// now. `nil` when there is no file; an error when it is broken. Touches no state of the context, so the push
    /// calls it without waiting for the context.
    nonisolated func recordFileToSend(table: String, id: String, scanned: ReadRecordFile?) throws -> (loaded: RecordFile.Loaded, sent: SentFile)? {
        let clock = FileSystem.timestampClockNanoseconds()
        let status = try FileSystem.status(layout.recordFile(table: table, id: id))
        if let scanned, scanned.isCurrent(status) {
            return (scanned.loaded, scanned.sentFile)
        }
        guard let status, let loaded = try loadRecordFile(table: table, id: id) else { return nil }
        return (loaded, ReadRecordFile(loaded: loaded, hash: nil, status: status, clock: clock).sentFile)
    }

    /// The server version of the record as last synced, from the index.
    func syncedVersion(table: String, id: String) throws -> String? {
        try index(table).entries[RecordFileName.fileName(for: id)]?.version
    }

    private func writeRecordFile(_ record: [String: JSONValue], table: String, id: String) throws {
        try FileSystem.createDirectory(layout.tableDirectory(table))
        var batch = DurableFileBatch()
        batch.write(RecordFile.encode(record), to: layout.recordFile(table: table, id: id))
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
    }
}

extension SyncContext {
    /// Every valid record of `table` (broken files are skipped).
    func records(table: String) throws -> [[String: JSONValue]] {
        try requireTable(table)
        let directory = layout.tableDirectory(table)
        var records: [[String: JSONValue]] = []
        for (name, status) in try FileSystem.listDirectory(directory) where status.isRegularFile && RecordFileName.looksLikeRecordFile(name) {
            let bytes = try FileSystem.readFile(directory + "/" + name)
            if case .success(let loaded) = RecordFile.check(bytes: bytes, fileName: name, relativePath: "tables/\(table)/\(name)") {
                records.append(loaded.record)
            }
        }
        return records
    }
}
