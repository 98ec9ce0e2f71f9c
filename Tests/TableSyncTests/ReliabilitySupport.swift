import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// Shared by the reliability suites (network faults, crashes, races, bad input): how long to run, how to read
/// the server's rows behind the client's back, and the store's invariants as one check.
enum Reliability {
    /// Waits until `condition` holds, polling every 10 ms; fails the test instead of hanging after `seconds`.
    static func waitUntil(_ what: String, seconds: Double = 30, _ condition: () throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while try !condition() {
            guard Date() < deadline else {
                struct Timeout: Error, CustomStringConvertible { let description: String }
                throw Timeout(description: "gave up waiting after \(seconds) s: \(what)")
            }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
    }

    /// `TABLESYNC_STRESS=1` (`make stress`) runs the long versions.
    static let stress: Bool = {
        let value = ProcessInfo.processInfo.environment["TABLESYNC_STRESS"] ?? ""
        return !value.isEmpty && value != "0"
    }()

    /// `bounded` in `make test`, `long` in `make stress`.
    static func scale(bounded: Int, long: Int) -> Int { stress ? long : bounded }

    /// Seed of the randomised suites: `TABLESYNC_SEED` repeats a run.
    static let seed: UInt64 = ProcessInfo.processInfo.environment["TABLESYNC_SEED"].flatMap { UInt64($0) } ?? 20_261_122

    /// Retries that keep the suites quick: the schedule is tested on its own in the transport tests.
    static let quickRetries = RetryPolicy(maximumAttempts: 4, baseDelay: 0.01, maximumDelay: 0.05)

    /// The server's rows of `table`, deleted ones included, by id, read directly (not through a proxy).
    static func serverRows(
        _ baseURL: String, table: String, token: String? = nil
    ) async throws -> [String: [String: JSONValue]] {
        // Pages of 1,000 records, as TableSync's own client asks for them (a v3 page otherwise holds the page size).
        var headers = [
            "ZUMO-API-VERSION": "3.0.0", ProtocolHeader.extensions: ProtocolExtension.wholePages.rawValue
        ]
        if let token { headers["Authorization"] = "Bearer " + token }
        let client = ServerHTTPClient(baseURL: baseURL, defaultHeaders: headers, timeout: 10, retryPolicy: .none)
        var rows: [String: [String: JSONValue]] = [:]
        var skip = 0
        while true {
            let response = try await client.send(
                HTTPRequest(
                    method: "GET", path: "/tables/" + table,
                    query: [
                        ("__includeDeleted", "true"), ("$orderby", "id"), ("$top", "1000"), ("$skip", String(skip))
                    ]))
            #expect(response.status == 200)
            let items = try JSONParser.parse(response.body)["items"]?.arrayValue ?? []
            for item in items {
                guard case .object(let row) = item, let id = row["id"]?.stringValue else { continue }
                #expect(rows[id] == nil, "the server holds \(id) twice")
                rows[id] = row
            }
            if items.count < 1000 { return rows }
            skip += items.count
        }
    }

    /// The live (not deleted) server rows of `table` as content without system properties.
    static func serverContent(
        _ baseURL: String, table: String, token: String? = nil
    ) async throws -> [String: [String: JSONValue]] {
        try await serverRows(baseURL, table: table, token: token)
            .filter { !ServerRecord.isDeleted($0.value) }
            .mapValues(ServerRecord.content)
    }

    /// The store's records of `table` as content without system properties.
    static func localContent(_ context: SyncContext, table: String) async throws -> [String: [String: JSONValue]] {
        var result: [String: [String: JSONValue]] = [:]
        for record in try await context.table(table).query() {
            result[record["id"]!.stringValue!] = ServerRecord.content(record)
        }
        return result
    }

    /// The invariants of docs/store.md that hold after a run (or a repairing open): `verify` finds no error, no
    /// temporary file, intent or settled log is left, and `journal.jsonl` holds exactly the pending operations,
    /// collapsed (at most one operation per record).
    static func checkInvariants(_ context: SyncContext, sourceLocation: SourceLocation = #_sourceLocation) async throws
    {
        let errors = try await context.verify().filter { $0.severity == .error }
        #expect(errors.isEmpty, "verify: \(errors)", sourceLocation: sourceLocation)
        let temporary = (try? FileManager.default.contentsOfDirectory(atPath: context.layout.temporaryDirectory)) ?? []
        #expect(temporary.isEmpty, "temporary files left: \(temporary)", sourceLocation: sourceLocation)
        #expect(!FileSystem.exists(context.layout.intentFile), "an intent is left", sourceLocation: sourceLocation)
        #expect(!FileSystem.exists(context.layout.settledFile), "a settled log is left", sourceLocation: sourceLocation)
        let pending = await context.pendingOperations
        let journalText = String(decoding: try FileSystem.readFile(context.layout.journalFile), as: UTF8.self)
        #expect(
            journalText == pending.map { String(decoding: Journal.line($0), as: UTF8.self) }.joined(),
            "journal.jsonl differs from the pending operations", sourceLocation: sourceLocation)
        let keys = pending.map(\.key)
        #expect(
            Set(keys).count == keys.count, "the journal holds two operations on one record",
            sourceLocation: sourceLocation)
    }
}

/// The `tablesync` executable, run the way cron runs it.
struct CLI {
    static let path = builtProduct("tablesync")
    /// The environment of every run: no token, no inherited `TABLESYNC_*` settings; the stat index flushes its log
    /// into a run every 24 lines (debug builds only), so that crashes and disk faults land in flushes and merges too.
    static let environment: [String: String] = ProcessInfo.processInfo.environment.filter {
        !$0.key.hasPrefix("TABLESYNC_")
    }
    .merging(["TABLESYNC_INDEX_FLUSH_LINES": "24"]) { $1 }

    /// Runs `tablesync ARGUMENTS` to completion.
    @discardableResult
    static func run(
        _ arguments: [String], environment: [String: String] = CLI.environment
    ) async throws
        -> (status: Int32, stdout: String, stderr: String, killed: Bool)
    {
        try await runProgram(path, arguments, environment: environment)
    }

    /// Starts `tablesync ARGUMENTS` without waiting, its standard input read from the file `input` if given;
    /// output goes nowhere.
    static func start(
        _ arguments: [String], environment: [String: String] = CLI.environment, input: String? = nil
    ) throws -> Subprocess.Child {
        try Subprocess.start(path, arguments, environment: environment, input: input.map { .file($0) } ?? .nothing)
    }

    /// Waits for `process` off the cooperative thread pool; `true` when a signal ended it.
    static func wait(_ process: Subprocess.Child) async -> (status: Int32, killed: Bool) {
        let ended = await process.waitForExit()
        return (ended.status, ended.killed)
    }
}
