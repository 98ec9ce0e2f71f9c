import GRDB

/// `tolower` and `toupper` of `$filter` on SQLite. SQLite's own `lower` and `upper` change ASCII letters only
/// (`upper('Amélie')` is `AMéLIE`), where PostgreSQL and the local ``FilterEvaluator`` map every letter; the server
/// registers these on each SQLite connection, computed as the evaluator computes them (Swift's full Unicode case
/// mapping, independent of locale).
enum UnicodeCaseFunctions {
    /// The SQL function `$filter`'s `tolower` becomes in `dialect`.
    static func lower(_ dialect: SQLDialect) -> String { dialect == .sqlite ? lowercase.name : "lower" }

    /// The SQL function `$filter`'s `toupper` becomes in `dialect`.
    static func upper(_ dialect: SQLDialect) -> String { dialect == .sqlite ? uppercase.name : "upper" }

    /// Adds the functions to a SQLite connection: what `Configuration.prepareDatabase` runs on each one it opens.
    static func register(on db: Database) {
        db.add(function: lowercase)
        db.add(function: uppercase)
    }

    private static let lowercase = mapping("tablesync_lower") { $0.lowercased() }
    private static let uppercase = mapping("tablesync_upper") { $0.uppercased() }

    /// A pure one-argument function that maps text with `transform` and gives anything else back as it is (the
    /// translation passes it text or null only).
    private static func mapping(_ name: String, _ transform: @escaping @Sendable (String) -> String) -> DatabaseFunction
    {
        DatabaseFunction(name, argumentCount: 1, pure: true) {
            (values: [DatabaseValue]) -> (any DatabaseValueConvertible)? in
            guard let text = String.fromDatabaseValue(values[0]) else { return values[0] }
            return transform(text)
        }
    }
}
