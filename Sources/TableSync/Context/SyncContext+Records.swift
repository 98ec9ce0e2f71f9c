import SyncProtocol
import TableSyncStorage

/// The record store as the context's tables, push and pull reach it.
extension SyncContext {
    /// Every valid record of `table` (broken files are skipped).
    package func records(table: String) throws -> [[String: JSONValue]] {
        try requireTable(table)
        return try recordFiles.all(table: table)
    }

    /// Writes records as the server has them and marks them synced
    /// (``RecordStore/applySynced(table:encoded:removals:guard:)``).
    func applySynced(
        table: String, records: [ServerRecord], removals: [String] = [],
        guard localGuard: SyncedRecordWriter.LocalGuard = .none
    ) throws -> SyncedRecordWriter.Outcome {
        try applySynced(table: table, encoded: EncodedRecords(records), removals: removals, guard: localGuard)
    }

    /// ``applySynced(table:records:removals:guard:)`` with the records encoded, and perhaps staged, already.
    func applySynced(
        table: String, encoded: EncodedRecords, removals: [String] = [],
        guard localGuard: SyncedRecordWriter.LocalGuard = .none
    ) throws -> SyncedRecordWriter.Outcome {
        try requireWritable()
        return try store.applySynced(table: table, encoded: encoded, removals: removals, guard: localGuard)
    }
}
