/// The records of a served table that a request reaches: all of them, or those of one owner in a per-user table
/// (``TableOptions/perUser``).
///
/// An owner's records are stored under a name of their own, `TABLE` U+001F `OWNER`, in the column that holds the
/// table's name: every statement of both repositories already selects on that column, so no query can reach
/// another owner's rows, and ids are unique per owner, so one owner's id never collides with another's. Table
/// names hold no U+001F, so the stored name tells both parts apart.
package struct RecordScope: Sendable, Hashable {
    /// The served table: its clock and write lock are the table's, whoever owns the rows.
    package var table: String
    /// The owner whose records these are, or `nil` for a table shared by everyone.
    package var owner: String?

    /// The records of `table` that `owner` owns, or all of them.
    package init(table: String, owner: String? = nil) {
        self.table = table
        self.owner = owner
    }

    /// The value of the table-name column of these rows.
    package var storedName: String {
        guard let owner else { return table }
        return table + Self.separator + owner
    }

    /// What separates a table's name from its owner's in ``storedName``.
    static let separator = "\u{1F}"
}
