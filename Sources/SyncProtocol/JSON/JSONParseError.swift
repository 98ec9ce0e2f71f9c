/// Why a JSON text could not be parsed, and where: 1-based line and column (in characters of the line,
/// counting bytes for non-UTF-8 input) and the 0-based byte offset.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based line of the offending character.
    public let line: Int
    /// 1-based column of the offending character within its line.
    public let column: Int
    /// 0-based byte offset of the offending character.
    public let offset: Int
    /// What was wrong, in words ("expected ',' or '}' after an object member").
    public let reason: String

    public init(line: Int, column: Int, offset: Int, reason: String) {
        self.line = line
        self.column = column
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "line \(line), column \(column): \(reason)" }
}
