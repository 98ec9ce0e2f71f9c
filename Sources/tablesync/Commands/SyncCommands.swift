import ArgumentParser
import SyncProtocol
import TableSync

/// Options shared by the commands that talk to the server.
struct ServerOptions: ParsableArguments {
    @Option(help: "Conflict policy for this run: manual, server-wins or client-wins (default: tablesync.json).")
    var conflictPolicy: String?

    @Option(help: "Seconds before a request without an answer fails.")
    var timeout: Double = 30

    @Option(help: "Attempts per request on connection failures, timeouts, 429 and 5xx.")
    var attempts: Int = 5

    @Flag(help: "Print no progress on standard error.")
    var quiet = false

    @Flag(name: .customLong("no-batch"), help: "Push one request per operation even when the server offers batches.")
    var noBatch = false

    func syncOptions(pageSize: Int? = nil, allowMassDelete: Bool = false, evict: Bool = false) throws -> SyncOptions {
        var policy: StoreSettings.ConflictPolicy?
        if let conflictPolicy {
            guard let parsed = StoreSettings.ConflictPolicy(rawValue: conflictPolicy) else {
                throw ValidationError("--conflict-policy must be one of manual, server-wins, client-wins")
            }
            policy = parsed
        }
        guard attempts >= 1 else { throw ValidationError("--attempts must be at least 1") }
        if let pageSize, pageSize < 1 { throw ValidationError("--page-size must be at least 1") }
        return SyncOptions(conflictPolicy: policy, timeout: timeout, retryPolicy: RetryPolicy(maximumAttempts: attempts),
                           pageSize: pageSize, allowMassDelete: allowMassDelete, evict: evict,
                           progress: ProgressDisplay.reporter(quiet: quiet), batch: !noBatch)
    }
}

/// Report rendering shared by push, pull and sync.
enum SyncReportText {
    static func push(_ report: PushReport) -> String {
        var parts = ["pushed \(report.applied) operation\(report.applied == 1 ? "" : "s")"]
        if !report.conflicts.isEmpty { parts.append("\(report.conflicts.count) new conflict(s)") }
        if !report.rejected.isEmpty { parts.append("\(report.rejected.count) refused") }
        if report.settledByPolicy > 0 { parts.append("\(report.settledByPolicy) settled by policy") }
        if !report.waiting.isEmpty { parts.append("\(report.waiting.count) waiting on conflicts") }
        if !report.problems.isEmpty {
            parts.append("\(report.problems.count) broken file(s) skipped (\(report.problems.map(\.description).joined(separator: "; ")))")
        }
        return parts.joined(separator: ", ")
    }

    static func pull(_ table: String, _ report: PullReport) -> String {
        var text = "pulled \(table): \(report.written) written, \(report.removed) removed, \(report.unchanged) unchanged, \(report.keptLocal) kept local\(report.evicted > 0 ? ", \(report.evicted) evicted" : ""), \(report.pages) page(s)"
        if !report.skipped.isEmpty {
            text += ", \(report.skipped.count) server record(s) skipped (\(report.skipped.map(skippedText).joined(separator: "; ")))"
        }
        return text
    }

    /// One skipped server record, as a person reads it.
    static func skippedText(_ skipped: SkippedServerRecord) -> String {
        "\(skipped.table)/\(skipped.id ?? "(no id)"): \(skipped.reason)"
    }

    static func skippedJSON(_ skipped: SkippedServerRecord) -> JSONValue {
        ["table": .string(skipped.table), "id": skipped.id.map(JSONValue.string) ?? .null, "reason": .string(skipped.reason)]
    }

    static func pushJSON(_ report: PushReport) -> JSONValue {
        [
            "applied": .integer(Int64(report.applied)),
            "conflicts": .array(report.conflicts.map { .string($0.description) }),
            "rejected": .array(report.rejected.map { .string($0.description) }),
            "settledByPolicy": .integer(Int64(report.settledByPolicy)),
            "waiting": .array(report.waiting.map { .string($0.description) }),
            "problems": .array(report.problems.map { .string($0.description) }),
            "requests": .integer(Int64(report.requests)),
            "batched": .bool(report.batched),
            "bytesSent": .integer(Int64(report.traffic.bytesSent)),
            "bytesReceived": .integer(Int64(report.traffic.bytesReceived)),
        ]
    }

    static func pullJSON(_ report: PullReport) -> JSONValue {
        var members: [String: JSONValue] = [
            "push": pushJSON(report.push), "written": .integer(Int64(report.written)), "removed": .integer(Int64(report.removed)),
            "unchanged": .integer(Int64(report.unchanged)), "keptLocal": .integer(Int64(report.keptLocal)), "pages": .integer(Int64(report.pages)),
            "evicted": .integer(Int64(report.evicted)), "table": .string(report.table),
            "skipped": .array(report.skipped.map(skippedJSON)), "pageSize": .integer(Int64(report.pageSize)),
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

/// `tablesync push`.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Queue hand edits, then send pending operations to the server in order.",
        discussion: "Exits 3 when conflicts wait (see `tablesync conflicts`), 4 when the server is unreachable (nothing is lost; retry later), 5 when credentials are refused, 2 when the server refuses the requests themselves (a table it does not serve, a protocol version it does not speak: nothing is filed as a conflict)."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var server: ServerOptions

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let options = try server.syncOptions()
            let context = try SyncContext(directory: global.store, purpose: "tablesync push")
            let report = try await context.push(options: options)
            ProgressDisplay.finish()
            if global.json { CommandOutput.printJSON(SyncReportText.pushJSON(report)) } else { print(SyncReportText.push(report) + ".") }
            return SyncReportText.status(report)
        }
    }
}

/// `tablesync pull TABLE`.
struct PullCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "Push TABLE's pending operations, then fetch what changed on the server.",
        discussion: "With --query-id the pull is incremental from the query's saved watermark (the query is created on first use); without it, everything matching --filter is fetched. Records with local changes are never overwritten; records deleted on the server are removed."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var server: ServerOptions
    @Argument(help: "The table.") var table: String
    @Option(help: "The query id whose watermark makes the pull incremental.") var queryID: String?
    @Option(help: "An OData $filter limiting what is pulled.") var filter: String?
    @Option(help: "Records asked per request (default 1000). A server that refuses the size is asked again with the largest it names, or with 500, 250, 100, 50, 25, 10 in turn; shorter pages than asked are followed to the end.") var pageSize: Int?
    @Flag(help: "Allow a pull to remove more than half of the table's local records.") var allowMassDelete = false
    @Flag(help: "Also remove local records that no longer match the query's filter (unless they have local changes).") var evict = false

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let options = try server.syncOptions(pageSize: pageSize, allowMassDelete: allowMassDelete, evict: evict)
            let context = try SyncContext(directory: global.store, purpose: "tablesync pull")
            let report = try await context.pull(table: table, queryID: queryID, filter: filter, options: options)
            ProgressDisplay.finish()
            if global.json {
                CommandOutput.printJSON(SyncReportText.pullJSON(report))
            } else {
                print(SyncReportText.push(report.push) + "; " + SyncReportText.pull(table, report) + ".")
            }
            return SyncReportText.status(report.push, pulls: [report])
        }
    }
}

/// `tablesync sync`.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Push, then pull every query in queries.json. The command for cron.",
        discussion: """
            One run at a time per store: a second run exits 6 at once. Exit codes: 0 done, 2 the server refuses the \
            requests themselves (see the message), 3 conflicts waiting, 4 server unreachable (retry later), \
            5 credentials refused, 6 locked, 7 broken files, 8 server records the store cannot hold were skipped \
            (see status).
            cron: */5 * * * * cd /srv/store && tablesync sync >>/var/log/tablesync.log 2>&1
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var server: ServerOptions
    @Option(help: "Records asked per pull request (default 1000); stepped down when the server refuses the size, as for pull.") var pageSize: Int?
    @Flag(help: "Allow a pull to remove more than half of a table's local records.") var allowMassDelete = false

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let options = try server.syncOptions(pageSize: pageSize, allowMassDelete: allowMassDelete)
            let context = try SyncContext(directory: global.store, purpose: "tablesync sync")
            let report = try await context.sync(options: options)
            ProgressDisplay.finish()
            if global.json {
                CommandOutput.printJSON([
                    "push": SyncReportText.pushJSON(report.push),
                    "pulls": .object(report.pulls.mapValues(SyncReportText.pullJSON)),
                ])
            } else {
                var lines = [SyncReportText.push(report.push)]
                for (id, pull) in report.pulls.sorted(by: { $0.key < $1.key }) { lines.append(SyncReportText.pull(pull.table, pull) + " (query \(id))") }
                print(lines.joined(separator: "; ") + ".")
            }
            return SyncReportText.status(report.push, pulls: Array(report.pulls.values))
        }
    }
}

/// `tablesync purge TABLE`.
struct PurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Remove local records of TABLE (all, or those matching --filter) and reset its query watermarks.",
        discussion: "Refused while the table has changes not pushed yet, unless --force, which drops them."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: String
    @Option(help: "Only records matching this OData $filter.") var filter: String?
    @Flag(help: "Also drop the table's pending operations, hand edits and conflicts.") var force = false

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let context = try SyncContext(directory: global.store, purpose: "tablesync purge")
            let removed = try await context.purge(table: table, filter: filter, force: force)
            if global.json { CommandOutput.printJSON(["removed": .integer(Int64(removed))]) } else { print("Purged \(removed) record(s) of \(table).") }
            return .done
        }
    }
}

/// `tablesync conflicts`.
struct ConflictsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts",
        abstract: "List the operations the server refused, with both sides.",
        discussion: "Settle each with `tablesync resolve TABLE/ID --keep-local|--take-server|--discard`. Exits 3 when any wait."
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let context = try SyncContext(directory: global.store, mode: .readOnly)
            let conflicts = try await context.conflicts()
            if global.json {
                CommandOutput.printJSON(["conflicts": .array(conflicts.map { conflict in
                    [
                        "record": .string(conflict.key.description), "operation": .string(conflict.operation.kind.rawValue),
                        "status": .integer(Int64(conflict.status)), "reason": .string(conflict.reason),
                        "local": conflict.local.map { .object($0) } ?? .null, "server": conflict.server.map { .object($0) } ?? .null,
                    ]
                })])
            } else if conflicts.isEmpty {
                print("No conflicts.")
            } else {
                for conflict in conflicts {
                    print("\(conflict.key)\t\(conflict.operation.kind.rawValue) refused (HTTP \(conflict.status)): \(conflict.reason)")
                }
            }
            return conflicts.isEmpty ? .done : .conflictsWaiting
        }
    }
}

/// `tablesync resolve TABLE/ID`.
struct ResolveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Settle one conflict: keep the local change, take the server's copy, or discard the record."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The record, as TABLE/ID.") var record: String
    @Flag(help: "Keep the local change; the next push sends it on top of the server's version.") var keepLocal = false
    @Flag(help: "Drop the local change and take the server's copy.") var takeServer = false
    @Flag(help: "Drop the local change and the local record.") var discard = false

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let choices: [(Bool, ConflictResolution)] = [(keepLocal, .keepLocal), (takeServer, .takeServer), (discard, .discard)]
            let chosen = choices.filter(\.0).map(\.1)
            guard chosen.count == 1 else { throw ValidationError("choose exactly one of --keep-local, --take-server, --discard") }
            guard let slash = record.firstIndex(of: "/") else { throw ValidationError("name the record as TABLE/ID") }
            let key = RecordKey(table: String(record[..<slash]), id: String(record[record.index(after: slash)...]))
            let context = try SyncContext(directory: global.store, purpose: "tablesync resolve")
            try await context.resolve(key, chosen[0])
            if global.json { CommandOutput.printJSON(["resolved": .string(key.description), "choice": .string(chosen[0].rawValue)]) } else { print("Resolved \(key) (\(chosen[0].rawValue)).") }
            return .done
        }
    }
}
