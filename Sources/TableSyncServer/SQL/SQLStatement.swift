/// SQL text with numbered placeholders (`?n` in SQLite, `$n` in PostgreSQL) and the values bound to them.
public struct SQLStatement: Sendable, Hashable, CustomStringConvertible {
    /// The statement text.
    public var sql: String
    /// The values for the placeholders, in placeholder order.
    public var bindings: [SQLValue]

    public init(sql: String, bindings: [SQLValue]) {
        self.sql = sql
        self.bindings = bindings
    }

    public var description: String { "\(sql) \(bindings)" }
}

/// Builds one statement: it hands out numbered placeholders as values are bound, so that numbers stay right
/// however fragments are nested and in whatever order they end up in the text.
public struct SQLBuilder: Sendable {
    /// The dialect of the placeholders and of the fragments that translators produce.
    public let dialect: SQLDialect
    /// The values bound so far.
    public private(set) var bindings: [SQLValue] = []

    public init(dialect: SQLDialect) { self.dialect = dialect }

    /// Binds `value` and returns its placeholder.
    public mutating func bind(_ value: SQLValue) -> String {
        bindings.append(value)
        switch dialect {
        case .sqlite: return "?\(bindings.count)"
        case .postgres: return "$\(bindings.count)"
        }
    }

    /// The statement with `sql` as its text and the values bound so far.
    public func statement(_ sql: String) -> SQLStatement { SQLStatement(sql: sql, bindings: bindings) }
}
