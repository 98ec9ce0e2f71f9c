/// The type of a declared column (``TableSchema``): which JSON values a record may hold in it, and how the
/// server stores, indexes and compares them.
public enum ColumnType: String, Sendable, Hashable, CaseIterable {
    /// A JSON string.
    case string
    /// A JSON number.
    case number
    /// JSON `true` or `false`.
    case boolean
    /// A string that ``Timestamp`` parses, stored as `yyyy-MM-ddTHH:mm:ss.fffZ` (UTC, milliseconds), so that the
    /// text order of stored dates is their time order.
    case date
    /// A date without a time, `yyyy-MM-dd` (.NET's `DateOnly`, OData's `Edm.Date`, as Datasync's clients send it),
    /// stored as written: its text order is its time order, and it compares with date literals.
    case dateOnly = "dateonly"

    /// The type's name with its article, for messages ("must be a number").
    var described: String {
        switch self {
        case .string: return "a string"
        case .number: return "a number"
        case .boolean: return "true or false"
        case .date: return "a date such as 2024-05-01T10:20:30.123Z"
        case .dateOnly: return "a date without a time such as 2024-05-01"
        }
    }
}
