import SyncProtocol
import TableSync

/// Report rendering shared by push, pull and sync.
enum SyncReportText {
    /// A push in one sentence: what was applied, refused, settled, waiting or skipped.
    static func push(_ report: PushReport) -> String {
        var parts: [String] = []
        if report.indexedCopies > 0 {
            parts.append("indexed \(report.indexedCopies) file(s) stamped as the server's copies")
        }
        if report.adoption.compared > 0 { parts.append(adoption(report.adoption)) }
        parts.append("pushed \(report.applied) operation\(report.applied == 1 ? "" : "s")")
        if !report.conflicts.isEmpty { parts.append("\(report.conflicts.count) new conflict(s)") }
        if !report.rejected.isEmpty { parts.append("\(report.rejected.count) refused") }
        if report.settledByPolicy > 0 { parts.append("\(report.settledByPolicy) settled by policy") }
        if !report.waiting.isEmpty { parts.append("\(report.waiting.count) waiting on conflicts") }
        if !report.queuedElsewhere.isEmpty {
            parts.append("\(report.queuedElsewhere.count) left to the clone that queued them")
        }
        if !report.problems.isEmpty {
            parts.append(
                """
                \(report.problems.count) broken file(s) skipped \
                (\(report.problems.map(\.description).joined(separator: "; ")))
                """
            )
        }
        return parts.joined(separator: ", ")
    }

    /// A sync as text: its push, then each query's pull.
    static func sync(_ report: SyncReport) -> String {
        var lines = [push(report.push)]
        for (id, pull) in report.pulls.sorted(by: { $0.key < $1.key }) {
            lines.append(self.pull(pull.table, pull) + " (query \(id))")
        }
        return lines.joined(separator: "; ") + "."
    }

    /// The message of `sync --commit` (or of `command`'s commit): a subject that counts what happened, then the
    /// sync's own report.
    static func commitMessage(_ report: SyncReport, command: String = "tablesync sync", files: [String] = []) -> String
    {
        var pulledByTable: [String: Int] = [:]
        for pull in report.pulls.values { pulledByTable[pull.table, default: 0] += pull.written + pull.removed }
        let pulled = pulledByTable.values.reduce(0, +)
        var subject = "\(command): pushed \(report.push.applied), pulled \(pulled)"
        let tables = pulledByTable.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        if !tables.isEmpty { subject += " (\(tables.joined(separator: ", ")))" }
        let conflicts = report.push.conflicts.count + report.push.adoption.conflicts.count
        if conflicts > 0 { subject += ", \(conflicts) new conflict(s)" }
        // A sync that moved no record can still change store files (copies brought up to date, a merged journal,
        // .gitignore lines): the subject says so rather than "pushed 0, pulled 0".
        if report.push.applied == 0, pulled == 0, conflicts == 0, !files.isEmpty {
            subject = "\(command): \(files.count) store file(s) brought up to date"
        }
        var body = sync(report)
        if !files.isEmpty {
            let shown = files.prefix(20).map { "  " + $0 }.joined(separator: "\n")
            body += "\n\nFiles (\(files.count)):\n" + shown + (files.count > 20 ? "\n  …" : "")
        }
        return subject + "\n\n" + body
    }

    /// The comparison of files this store had never synced, in a few words.
    static func adoption(_ report: AdoptionReport) -> String {
        var parts = ["\(report.unchanged) unchanged"]
        if report.takenFromServer > 0 { parts.append("\(report.takenFromServer) taken from the server") }
        if report.edited > 0 { parts.append("\(report.edited) edited") }
        if report.created > 0 { parts.append("\(report.created) new") }
        if report.deleted > 0 { parts.append("\(report.deleted) deleted") }
        if report.alreadyDeleted > 0 { parts.append("\(report.alreadyDeleted) deleted on the server already") }
        if report.restored > 0 { parts.append("\(report.restored) brought back") }
        if !report.conflicts.isEmpty { parts.append("\(report.conflicts.count) in conflict") }
        if report.settledByPolicy > 0 { parts.append("\(report.settledByPolicy) settled by policy") }
        return "compared \(report.compared) file(s) with the server (\(parts.joined(separator: ", ")))"
    }

    /// A pull of `table` in one sentence: what was written, removed, kept and skipped, in how many pages.
    static func pull(_ table: String, _ report: PullReport) -> String {
        var text =
            """
            pulled \(table): \(report.written) written, \(report.removed) removed, \(report.unchanged) unchanged, \
            \(report.keptLocal) kept local\(report.evicted > 0 ? ", \(report.evicted) evicted" : ""), \(report.pages) \
            page(s)
            """
        if !report.skipped.isEmpty {
            text +=
                """
                , \(report.skipped.count) server record(s) skipped \
                (\(report.skipped.map(skippedText).joined(separator: "; ")))
                """
        }
        return text
    }

    /// One skipped server record, as a person reads it.
    static func skippedText(_ skipped: SkippedServerRecord) -> String {
        "\(skipped.table)/\(skipped.id ?? "(no id)"): \(skipped.reason)"
    }

    /// One skipped server record in `--json` output.
    static func skippedJSON(_ skipped: SkippedServerRecord) -> JSONValue {
        [
            "table": .string(skipped.table), "id": skipped.id.map(JSONValue.string) ?? .null,
            "reason": .string(skipped.reason)
        ]
    }

    /// A push in `--json` output, with its requests and bytes.
    static func pushJSON(_ report: PushReport) -> JSONValue {
        [
            "applied": .integer(Int64(report.applied)),
            "conflicts": .array(report.conflicts.map { .string($0.description) }),
            "rejected": .array(report.rejected.map { .string($0.description) }),
            "settledByPolicy": .integer(Int64(report.settledByPolicy)),
            "waiting": .array(report.waiting.map { .string($0.description) }),
            "queuedElsewhere": .array(report.queuedElsewhere.map { .string($0.description) }),
            "problems": .array(report.problems.map { .string($0.description) }),
            "requests": .integer(Int64(report.requests)),
            "batched": .bool(report.batched),
            "indexedCopies": .integer(Int64(report.indexedCopies)),
            "bytesSent": .integer(Int64(report.traffic.bytesSent)),
            "bytesReceived": .integer(Int64(report.traffic.bytesReceived)),
            "compared": [
                "unchanged": .integer(Int64(report.adoption.unchanged)),
                "takenFromServer": .integer(Int64(report.adoption.takenFromServer)),
                "edited": .integer(Int64(report.adoption.edited)),
                "created": .integer(Int64(report.adoption.created)),
                "deleted": .integer(Int64(report.adoption.deleted)),
                "alreadyDeleted": .integer(Int64(report.adoption.alreadyDeleted)),
                "restored": .integer(Int64(report.adoption.restored)),
                "conflicts": .array(report.adoption.conflicts.map { .string($0.description) }),
                "settledByPolicy": .integer(Int64(report.adoption.settledByPolicy)),
                "requests": .integer(Int64(report.adoption.requests))
            ]
        ]
    }

    /// A pull in `--json` output, with the push before it and the watermark it reached.
    static func pullJSON(_ report: PullReport) -> JSONValue {
        var members: [String: JSONValue] = [
            "push": pushJSON(report.push), "written": .integer(Int64(report.written)),
            "removed": .integer(Int64(report.removed)),
            "unchanged": .integer(Int64(report.unchanged)), "keptLocal": .integer(Int64(report.keptLocal)),
            "pages": .integer(Int64(report.pages)),
            "evicted": .integer(Int64(report.evicted)), "table": .string(report.table),
            "skipped": .array(report.skipped.map(skippedJSON)), "pageSize": .integer(Int64(report.pageSize))
        ]
        if let watermark = report.watermark {
            members["updatedAt"] = .string(watermark.updatedAt)
            if let lastID = watermark.lastID { members["lastId"] = .string(lastID) }
        }
        return .object(members)
    }

    /// Exit status after a run: broken files, then conflicts waiting (new or old), then server records skipped by
    /// the pulls make it not plainly done.
    static func status(_ push: PushReport, pulls: [PullReport] = []) -> ExitStatus {
        if !push.problems.isEmpty { return .invalidStore }
        if !(push.conflicts.isEmpty && push.rejected.isEmpty && push.waiting.isEmpty) { return .conflictsWaiting }
        return pulls.allSatisfy { $0.skipped.isEmpty } ? .done : .recordsSkipped
    }
}
