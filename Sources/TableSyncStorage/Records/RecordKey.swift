/// A record's identity in the store: its table and id.
public struct RecordKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The table.
    public let table: String
    /// The record's id.
    public let id: String

    /// The record `id` of `table`.
    public init(table: String, id: String) {
        self.table = table
        self.id = id
    }

    /// Orders keys by table, then id.
    public static func < (lhs: RecordKey, rhs: RecordKey) -> Bool {
        (lhs.table, lhs.id) < (rhs.table, rhs.id)
    }

    /// `table/id`, the form `resolve` and messages use.
    public var description: String { "\(table)/\(id)" }
}
