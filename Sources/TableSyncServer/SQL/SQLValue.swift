/// A value bound to a statement parameter. Values never become part of SQL text.
package enum SQLValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case text(String)
}
