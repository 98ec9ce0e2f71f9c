/// A change to one row of the records table, as a write plans it (``RecordWritePlan``) and ``RecordWriteSQL`` writes
/// it in either dialect.
enum StoredRowChange: Sendable, Hashable {
    /// A new row, created and updated at `stamp`, not deleted; `body` is the properties' compact canonical JSON.
    case insert(id: String, stamp: Int64, body: String)
    /// The row's body, `updatedAt` and deleted mark replaced; its `createdAt` stays.
    case update(id: String, body: String, updatedAt: Int64, deleted: Bool)
    /// The row's deleted mark set or cleared and its `updatedAt` replaced; its body stays.
    case mark(id: String, deleted: Bool, updatedAt: Int64)
    /// The row removed.
    case delete(id: String)

    /// The body the change writes, if it writes one.
    var body: String? {
        switch self {
        case .insert(_, _, let body), .update(_, let body, _, _): return body
        case .mark, .delete: return nil
        }
    }
}
