/// Which record files a push's scan for hand edits looks at.
///
/// `tablesync` scans every file: it cannot know what changed since it last ran. `watch` knows, from the file
/// events it follows from its start (``FileEvents``): its runs scan only the files named since the last one, so
/// that a hand edit costs a look at its own file rather than a walk of the table, and the files a run writes
/// itself, named by their events afterwards, cost one `stat` each.
package enum ScanScope: Sendable, Equatable {
    /// Every file of every table.
    case everything
    /// Only these file names, by table; a table not named is not looked at.
    case files([String: Set<String>])

    /// Nothing: a run for the server's changes alone, or for the journal's.
    package static let nothing = ScanScope.files([:])

    /// The scope covering this one and `other`.
    package func adding(_ other: ScanScope) -> ScanScope {
        guard case .files(let mine) = self, case .files(let theirs) = other else { return .everything }
        return .files(mine.merging(theirs) { $0.union($1) })
    }

    /// The names to look at in `table`, or `nil` to list its whole directory.
    func names(in table: String) -> Set<String>? {
        guard case .files(let byTable) = self else { return nil }
        return byTable[table] ?? []
    }
}
