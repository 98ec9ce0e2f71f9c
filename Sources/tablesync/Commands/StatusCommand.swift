import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync status`.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show pending operations, hand edits not yet queued, broken files and conflicts.",
        discussion: "Reads only, takes no lock, and costs one stat per record file when nothing changed. Exits 7 when a record file is broken, 3 when conflicts wait."
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let context = try SyncContext(directory: global.store, mode: .readOnly)
            let status = try await context.status()
            if global.json {
                CommandOutput.printJSON(Self.json(status))
            } else {
                print(Self.text(status, root: context.layout.root), terminator: "")
            }
            if !status.problems.isEmpty { return .invalidStore }
            return status.conflicts.isEmpty ? .done : .conflictsWaiting
        }
    }

    static func json(_ status: StoreStatus) -> JSONValue {
        [
            "remote": .string(status.remote),
            "pending": .array(status.pending.map(\.json)),
            "handEdits": .array(status.handEdits.map { change in
                ["change": .string(change.kind.rawValue), "table": .string(change.table), "id": .string(change.id),
                 "file": .string("tables/\(change.table)/\(change.fileName)")]
            }),
            "problems": .array(status.problems.map(problemJSON)),
            "conflicts": .array(status.conflicts.map { .string($0.description) }),
            "skippedServerRecords": .array(status.skippedServerRecords.map(SyncReportText.skippedJSON)),
            "clean": .bool(status.isClean),
        ]
    }

    static func problemJSON(_ problem: RecordFileProblem) -> JSONValue {
        var members: [String: JSONValue] = ["file": .string(problem.path), "reason": .string(problem.reason)]
        if let line = problem.line { members["line"] = .integer(Int64(line)) }
        if let column = problem.column { members["column"] = .integer(Int64(column)) }
        return .object(members)
    }

    static func text(_ status: StoreStatus, root: String) -> String {
        var lines = ["Store \(root), remote \(status.remote)"]
        if status.isClean {
            lines.append("Nothing to push; no hand edits, broken files or conflicts.")
        }
        if !status.pending.isEmpty {
            lines.append("")
            lines.append("Pending operations (\(status.pending.count), pushed in this order):")
            for operation in status.pending {
                lines.append("  \(operation.kind.rawValue.padding(7))\(operation.table)/\(operation.id)")
            }
        }
        if !status.handEdits.isEmpty {
            lines.append("")
            lines.append("Changed by hand, queued by the next push (\(status.handEdits.count)):")
            for change in status.handEdits {
                lines.append("  \(change.kind.rawValue.padding(9))tables/\(change.table)/\(change.fileName)")
            }
        }
        if !status.problems.isEmpty {
            lines.append("")
            lines.append("Broken files, skipped until fixed (\(status.problems.count)):")
            for problem in status.problems { lines.append("  \(problem)") }
        }
        if !status.conflicts.isEmpty {
            lines.append("")
            lines.append("Conflicts waiting for `tablesync resolve` (\(status.conflicts.count)):")
            for key in status.conflicts { lines.append("  \(key)") }
        }
        if !status.skippedServerRecords.isEmpty {
            lines.append("")
            lines.append("Server records this store cannot hold, skipped by pulls (\(status.skippedServerRecords.count)):")
            for skipped in status.skippedServerRecords { lines.append("  \(SyncReportText.skippedText(skipped))") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}

/// `tablesync log`.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "List the pending operations in the order push sends them."
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let context = try SyncContext(directory: global.store, mode: .readOnly)
            let operations = await context.pendingOperations
            if global.json {
                CommandOutput.printJSON(["pending": .array(operations.map(\.json))])
            } else if operations.isEmpty {
                print("No pending operations.")
            } else {
                for operation in operations {
                    let base = operation.baseVersion.map { " (on version \($0))" } ?? ""
                    print("\(String(operation.sequence).padding(6))\(operation.kind.rawValue.padding(7))\(operation.table)/\(operation.id)\(base)")
                }
            }
            return .done
        }
    }
}

/// `tablesync verify`.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check the store's invariants and say what is wrong.",
        discussion: "Checks settings, queries, the journal against the record files, every record file (valid JSON object, canonical form, named after its id) and leftovers of interrupted runs. Changes nothing. Exits 7 when it finds an error; notices alone exit 0."
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let context = try SyncContext(directory: global.store, mode: .inspect, purpose: "tablesync verify")
            let findings = try await context.verify()
            let errors = findings.filter { $0.severity == .error }
            if global.json {
                CommandOutput.printJSON([
                    "ok": .bool(errors.isEmpty),
                    "findings": .array(findings.map { ["severity": .string($0.severity.rawValue), "file": .string($0.path), "message": .string($0.message)] }),
                ])
            } else if findings.isEmpty {
                print("The store is consistent.")
            } else {
                for finding in findings { print("\(finding.severity.rawValue): \(finding)") }
                print(errors.isEmpty ? "No errors; the notices settle on the next run." : "\(errors.count) error(s).")
            }
            return errors.isEmpty ? .done : .invalidStore
        }
    }
}
