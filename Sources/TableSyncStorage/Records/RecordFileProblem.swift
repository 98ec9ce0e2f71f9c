import SyncProtocol

/// A record file that cannot be used, with where and why: reported by `status`, `verify` and the hand-edit
/// scan, which skip the file and carry on with the others.
public struct RecordFileProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path relative to the store (`tables/todo/a1.json`).
    public let path: String
    /// 1-based line of the problem, when it has one.
    package let line: Int?
    /// 1-based column of the problem, when it has one.
    package let column: Int?
    /// What is wrong, in words.
    public let reason: String
    /// Whether the file holds git's conflict markers: a merge not settled yet, which a commit must not stage.
    package let holdsConflictMarkers: Bool
    /// The id of the record the file holds when it is named for another (a `git mv`, a copy): that record still has
    /// a file, so its own file's absence is no delete.
    package let misnamedRecord: String?

    /// A problem with the file at `path` (relative to the store), at `line` and `column` when known.
    package init(
        path: String, line: Int? = nil, column: Int? = nil, reason: String, holdsConflictMarkers: Bool = false,
        misnamedRecord: String? = nil
    ) {
        self.path = path
        self.line = line
        self.column = column
        self.reason = reason
        self.holdsConflictMarkers = holdsConflictMarkers
        self.misnamedRecord = misnamedRecord
    }

    /// The problem as `path:line:column: reason`.
    public var description: String {
        var location = path
        if let line { location += ":\(line)" }
        if let column { location += ":\(column)" }
        return "\(location): \(reason)"
    }
}
