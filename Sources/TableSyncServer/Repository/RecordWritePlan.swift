import SyncProtocol

/// What one write does, decided before any statement runs: the change to its stored row, the `updatedAt` it is
/// stamped with, and its result once the change is stored. ``RecordWritePlanner`` makes one per write of a batch;
/// a repository runs its ``change`` in its dialect (``RecordWriteSQL``).
struct RecordWritePlan: Sendable, Hashable {
    /// The table written to, whose clock moves on to ``stamp`` once the change is stored.
    var table: String
    /// The write's `updatedAt`. A write that finds no row to change takes its stamp all the same.
    var stamp: Int64
    /// The change to the row, or `nil` when the decision changes a row that does not exist.
    var change: StoredRowChange?
    /// The write's result: the row as stored (after a hard delete: the removed row, marked deleted), or `nil` when
    /// the decision changes a row that does not exist.
    var result: StoredRecord?

    /// The plan of `decision` for record `id` of `table`, whose row was found as `existing`, stamped `stamp`.
    init(_ decision: RecordWrite, table: String, id: String, existing: StoredRecord?, stamp: Int64) {
        self.table = table
        self.stamp = stamp
        (change, result) = Self.outcome(of: decision, id: id, existing: existing, stamp: stamp)
    }

    /// The change `decision` makes to the row of record `id`, found as `existing`, and the record it leaves.
    private static func outcome(
        of decision: RecordWrite, id: String, existing: StoredRecord?, stamp: Int64
    ) -> (StoredRowChange?, StoredRecord?) {
        switch decision {
        case .insert(let properties):
            let record = StoredRecord(
                id: id, createdAt: stamp, updatedAt: stamp, deleted: false, properties: properties)
            return (.insert(id: id, stamp: stamp, body: body(properties)), record)
        case .update(let properties), .restore(let properties):
            guard var record = existing else { return (nil, nil) }
            record.properties = properties
            record.updatedAt = stamp
            if case .restore = decision { record.deleted = false }
            return (.update(id: id, body: body(properties), updatedAt: stamp, deleted: record.deleted), record)
        case .softDelete, .undelete:
            guard var record = existing else { return (nil, nil) }
            record.deleted = decision == .softDelete
            record.updatedAt = stamp
            return (.mark(id: id, deleted: record.deleted, updatedAt: stamp), record)
        case .hardDelete:
            guard var record = existing else { return (nil, nil) }
            record.deleted = true
            record.updatedAt = stamp
            return (.delete(id: id), record)
        }
    }

    /// The stored form of `properties`: their compact canonical JSON.
    static func body(_ properties: [String: JSONValue]) -> String {
        CanonicalJSON.string(.object(properties), style: .compact)
    }
}
