/// SQL text with numbered placeholders (`?n` in SQLite, `$n` in PostgreSQL) and the values bound to them.
package struct SQLStatement: Sendable, Hashable, CustomStringConvertible {
    /// The statement text.
    package var sql: String
    /// The values for the placeholders, in placeholder order.
    package var bindings: [SQLValue]

    package init(sql: String, bindings: [SQLValue]) {
        self.sql = sql
        self.bindings = bindings
    }

    package var description: String { "\(sql) \(bindings)" }
}

/// Builds one statement: it hands out numbered placeholders as values are bound, so that numbers stay right
/// however fragments are nested and in whatever order they end up in the text.
package struct SQLBuilder: Sendable {
    /// The dialect of the placeholders and of the fragments that translators produce.
    package let dialect: SQLDialect
    /// The values bound so far.
    package private(set) var bindings: [SQLValue] = []

    package init(dialect: SQLDialect) { self.dialect = dialect }

    /// Binds `value` and returns its placeholder.
    package mutating func bind(_ value: SQLValue) -> String {
        bindings.append(value)
        switch dialect {
        case .sqlite: return "?\(bindings.count)"
        case .postgres: return "$\(bindings.count)"
        }
    }

    /// The statement with `sql` as its text and the values bound so far.
    package func statement(_ sql: String) -> SQLStatement { SQLStatement(sql: sql, bindings: bindings) }
}
