/// The SQL dialects the repositories speak. Everything that differs between them is decided by a `switch`
/// over this type, in the SQL layer only.
package enum SQLDialect: Sendable, Hashable {
    case sqlite
    case postgres
}
