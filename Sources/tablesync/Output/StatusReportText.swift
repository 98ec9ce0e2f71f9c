import SyncProtocol
import TableSync

/// How `tablesync status` shows a ``StoreStatus``: as text for a person, or as one JSON document.
enum StatusReportText {
    /// `status --json`: the status as one JSON document.
    static func json(_ status: StoreStatus) -> JSONValue {
        [
            "remote": .string(status.remote),
            "pending": .array(status.pending.map(\.json)),
            "queuedElsewhere": .array(status.queuedElsewhere.map(\.json)),
            "handEdits": .array(
                status.handEdits.map { change in
                    [
                        "change": .string(change.kind.rawValue), "table": .string(change.table),
                        "id": .string(change.id),
                        "file": .string("tables/\(change.table)/\(change.fileName)")
                    ]
                }),
            "serverCopies": .object(status.serverCopies.mapValues { .integer(Int64($0)) }),
            // What the scan cost: record files looked at, and those of them read.
            "scan": ["files": .integer(Int64(status.filesSeen)), "read": .integer(Int64(status.filesHashed))],
            "problems": .array(status.problems.map(problemJSON)),
            "ignored": .array(status.leftovers.map(JSONValue.string)),
            "conflicts": .array(status.conflicts.map { .string($0.description) }),
            "skippedServerRecords": .array(status.skippedServerRecords.map(SyncReportText.skippedJSON)),
            "clean": .bool(status.isClean),
            "git": .array(status.gitWarnings.map(JSONValue.string))
        ]
    }

    /// A broken record file: its path, the reason, and the line and column when known.
    static func problemJSON(_ problem: RecordFileProblem) -> JSONValue {
        var members: [String: JSONValue] = ["file": .string(problem.path), "reason": .string(problem.reason)]
        if let line = problem.line { members["line"] = .integer(Int64(line)) }
        if let column = problem.column { members["column"] = .integer(Int64(column)) }
        return .object(members)
    }

    /// `status`: the status as text, one section per kind of change, in the order push handles them.
    static func text(_ status: StoreStatus, root: String) -> String {
        var lines = ["Store \(root), remote \(status.remote)"]
        if status.isClean {
            lines.append("Nothing to push; no hand edits, broken files or conflicts.")
        }
        let edits = { (kinds: Set<LocalChange.Kind>) in status.handEdits.filter { kinds.contains($0.kind) } }
        let sections = [
            git(status.gitWarnings), pending(status.pending), queuedElsewhere(status.queuedElsewhere),
            serverCopies(status.serverCopies), uncompared(edits([.uncompared])),
            handEdits(edits([.created, .modified, .deleted])), removedByGit(edits([.removedByGit])),
            missing(edits([.missing])), deleteConflicts(edits([.deleteConflict])), problems(status.problems),
            ignored(status.leftovers), conflicts(status.conflicts), skipped(status.skippedServerRecords)
        ]
        for section in sections where !section.isEmpty { lines += [""] + section }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The sections of ``StatusReportText/text(_:root:)``, each its lines, or none when it has nothing to show.
extension StatusReportText {
    private static func git(_ warnings: [String]) -> [String] {
        warnings.isEmpty ? [] : ["Git:"] + warnings.map { "  \($0)" }
    }

    private static func pending(_ operations: [PendingOperation]) -> [String] {
        guard !operations.isEmpty else { return [] }
        return ["Pending operations (\(operations.count), pushed in this order):"] + operations.map(operationLine)
    }

    private static func queuedElsewhere(_ operations: [PendingOperation]) -> [String] {
        guard !operations.isEmpty else { return [] }
        return [
            """
            Queued in another clone of the store, sent from there (\(operations.count)); its sync \
            commit takes them
            """,
            "  out of this journal. If that clone is gone, `tablesync take-over` makes them this clone's to send:"
        ] + operations.map(operationLine)
    }

    private static func operationLine(_ operation: PendingOperation) -> String {
        "  \(operation.kind.rawValue.padding(7))\(operation.table)/\(operation.id)"
    }

    private static func serverCopies(_ copies: [String: Int]) -> [String] {
        guard !copies.isEmpty else { return [] }
        let count = copies.values.reduce(0, +)
        let tables = copies.map { "\($0.key) \($0.value)" }.sorted()
        return [
            """
            Copies of the server's records this store has not indexed yet: \(count) record file(s) \
            (\(tables.joined(separator: ", "))).
            """,
            "  Each is stamped as the server's copy of the version it names "
                + "(a fresh clone, a lost .tablesync/, a merge);",
            "  the next push or sync indexes them and sends nothing for them."
        ]
    }

    private static func uncompared(_ changes: [LocalChange]) -> [String] {
        guard !changes.isEmpty else { return [] }
        let tables = Dictionary(grouping: changes, by: \.table).map { "\($0.key) \($0.value.count)" }.sorted()
        return [
            """
            Not yet compared with the server: \(changes.count) record file(s) \
            (\(tables.joined(separator: ", "))).
            """,
            "  They carry server versions this store did not sync "
                + "(a fresh clone, a restore, a lost .tablesync/, or a git",
            "  merge or checkout). The next push or sync compares them with the server first "
                + "and sends only real edits."
        ]
    }

    private static func handEdits(_ changes: [LocalChange]) -> [String] {
        guard !changes.isEmpty else { return [] }
        return ["Changed by hand, queued by the next push (\(changes.count)):"]
            + changes.map { "  \($0.kind.rawValue.padding(9))\(filePath($0))" }
    }

    private static func removedByGit(_ changes: [LocalChange]) -> [String] {
        guard !changes.isEmpty else { return [] }
        return [
            "Removed by a git command, compared with the server by the next push (\(changes.count)):",
            "  a record the server deleted too is forgotten; one it still has is deleted after a merge or commit, "
                + "brought back after a switch."
        ] + changes.map { "  " + filePath($0) }
    }

    private static func missing(_ changes: [LocalChange]) -> [String] {
        guard !changes.isEmpty else { return [] }
        return [
            """
            Deleted, as far as git tells (\(changes.count)): HEAD has these files; the next push deletes each on \
            the server
            """,
            "  unless the server deleted it too."
        ] + changes.map { "  " + filePath($0) }
    }

    private static func deleteConflicts(_ changes: [LocalChange]) -> [String] {
        guard !changes.isEmpty else { return [] }
        return [
            """
            Held back: a delete is pending but the file holds content (\(changes.count)); the next push \
            files a conflict:
            """
        ] + changes.map { "  " + filePath($0) }
    }

    private static func filePath(_ change: LocalChange) -> String { "tables/\(change.table)/\(change.fileName)" }

    private static func problems(_ problems: [RecordFileProblem]) -> [String] {
        problems.isEmpty ? [] : ["Broken files, skipped until fixed (\(problems.count)):"] + problems.map { "  \($0)" }
    }

    private static func ignored(_ leftovers: [String]) -> [String] {
        leftovers.isEmpty
            ? [] : ["Ignored (\(leftovers.count)): \(LeftoverFileName.notice)"] + leftovers.map { "  " + $0 }
    }

    private static func conflicts(_ keys: [RecordKey]) -> [String] {
        keys.isEmpty ? [] : ["Conflicts waiting for `tablesync resolve` (\(keys.count)):"] + keys.map { "  \($0)" }
    }

    private static func skipped(_ records: [SkippedServerRecord]) -> [String] {
        guard !records.isEmpty else { return [] }
        return ["Server records this store cannot hold, skipped by pulls (\(records.count)):"]
            + records.map { "  \(SyncReportText.skippedText($0))" }
    }
}
