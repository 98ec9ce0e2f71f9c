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
        if !status.gitWarnings.isEmpty {
            lines.append("")
            lines.append("Git:")
            for warning in status.gitWarnings { lines.append("  \(warning)") }
        }
        if !status.pending.isEmpty {
            lines.append("")
            lines.append("Pending operations (\(status.pending.count), pushed in this order):")
            for operation in status.pending {
                lines.append("  \(operation.kind.rawValue.padding(7))\(operation.table)/\(operation.id)")
            }
        }
        if !status.queuedElsewhere.isEmpty {
            lines.append("")
            lines.append(
                """
                Queued in another clone of the store, sent from there (\(status.queuedElsewhere.count)); its sync \
                commit takes them
                """
            )
            lines.append(
                "  out of this journal. If that clone is gone, `tablesync take-over` makes them this clone's to send:")
            for operation in status.queuedElsewhere {
                lines.append("  \(operation.kind.rawValue.padding(7))\(operation.table)/\(operation.id)")
            }
        }
        let handEdits = status.handEdits.filter { [.created, .modified, .deleted].contains($0.kind) }
        let uncompared = status.handEdits.filter { $0.kind == .uncompared }
        let removedByGit = status.handEdits.filter { $0.kind == .removedByGit }
        let missing = status.handEdits.filter { $0.kind == .missing }
        let deleteConflicts = status.handEdits.filter { $0.kind == .deleteConflict }
        if !status.serverCopies.isEmpty {
            lines.append("")
            let count = status.serverCopies.values.reduce(0, +)
            let tables = status.serverCopies.map { "\($0.key) \($0.value)" }.sorted()
            lines.append(
                """
                Copies of the server's records this store has not indexed yet: \(count) record file(s) \
                (\(tables.joined(separator: ", "))).
                """
            )
            lines.append(
                "  Each is stamped as the server's copy of the version it names "
                    + "(a fresh clone, a lost .tablesync/, a merge);"
            )
            lines.append("  the next push or sync indexes them and sends nothing for them.")
        }
        if !uncompared.isEmpty {
            lines.append("")
            let tables = Dictionary(grouping: uncompared, by: \.table).map { "\($0.key) \($0.value.count)" }.sorted()
            lines.append(
                """
                Not yet compared with the server: \(uncompared.count) record file(s) \
                (\(tables.joined(separator: ", "))).
                """
            )
            lines.append(
                "  They carry server versions this store did not sync "
                    + "(a fresh clone, a restore, a lost .tablesync/, or a git"
            )
            lines.append(
                "  merge or checkout). The next push or sync compares them with the server first "
                    + "and sends only real edits."
            )
        }
        if !handEdits.isEmpty {
            lines.append("")
            lines.append("Changed by hand, queued by the next push (\(handEdits.count)):")
            for change in handEdits {
                lines.append("  \(change.kind.rawValue.padding(9))tables/\(change.table)/\(change.fileName)")
            }
        }
        if !removedByGit.isEmpty {
            lines.append("")
            lines.append("Removed by a git command, compared with the server by the next push (\(removedByGit.count)):")
            lines.append(
                "  a record the server deleted too is forgotten; one it still has is deleted after a merge or commit, "
                    + "brought back after a switch."
            )
            for change in removedByGit { lines.append("  tables/\(change.table)/\(change.fileName)") }
        }
        if !missing.isEmpty {
            lines.append("")
            lines.append(
                """
                Deleted, as far as git tells (\(missing.count)): HEAD has these files; the next push deletes each on \
                the server
                """
            )
            lines.append("  unless the server deleted it too.")
            for change in missing { lines.append("  tables/\(change.table)/\(change.fileName)") }
        }
        if !deleteConflicts.isEmpty {
            lines.append("")
            lines.append(
                """
                Held back: a delete is pending but the file holds content (\(deleteConflicts.count)); the next push \
                files a conflict:
                """
            )
            for change in deleteConflicts { lines.append("  tables/\(change.table)/\(change.fileName)") }
        }
        if !status.problems.isEmpty {
            lines.append("")
            lines.append("Broken files, skipped until fixed (\(status.problems.count)):")
            for problem in status.problems { lines.append("  \(problem)") }
        }
        if !status.leftovers.isEmpty {
            lines += ["", "Ignored (\(status.leftovers.count)): \(LeftoverFileName.notice)"]
            lines += status.leftovers.map { "  " + $0 }
        }
        if !status.conflicts.isEmpty {
            lines.append("")
            lines.append("Conflicts waiting for `tablesync resolve` (\(status.conflicts.count)):")
            for key in status.conflicts { lines.append("  \(key)") }
        }
        if !status.skippedServerRecords.isEmpty {
            lines.append("")
            lines.append(
                "Server records this store cannot hold, skipped by pulls (\(status.skippedServerRecords.count)):")
            for skipped in status.skippedServerRecords { lines.append("  \(SyncReportText.skippedText(skipped))") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
