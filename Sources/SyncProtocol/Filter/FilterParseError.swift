/// Why a `$filter` text could not be parsed, and where.
///
/// ```swift
/// do {
///     _ = try FilterParser.parse("startswith(text, 'a'")
/// } catch let error as FilterParseError {
///     print(error)   // column 21: expected ')' after the arguments of startswith
/// }
/// ```
public struct FilterParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 1-based column of the offending character, counted in Unicode scalars (characters, for ordinary
    /// text); one past the last character when the filter ended too early.
    public let column: Int
    /// What was wrong, in words a person can act on ("unknown function 'startwith'").
    public let reason: String

    /// An error at `column` (1-based) for `reason`.
    public init(column: Int, reason: String) {
        self.column = column
        self.reason = reason
    }

    /// Why OData's geography values are refused, whether as a `geography'…'` literal or as a `geo.` function: JSON
    /// records hold no such values, so there is nothing for them to compare.
    static let noGeography =
        "geography values and the geo functions (geo.distance, geo.intersects, geo.length) are not supported: "
        + "records are JSON, which has no geography type"

    /// `column N: reason`, the form the CLI and the server's 400 responses show.
    public var description: String { "column \(column): \(reason)" }
}
