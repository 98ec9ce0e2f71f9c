import Foundation
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// The client against servers it did not write: the Azure node backend's answers (``AzureNodeStandIn`` stands
/// for azure-mobile-apps-node 4.0.1, as each test says) and tablesync-server tables with their own limits.
@Suite("Interop with other servers")
struct InteropTests {
    static let options = SyncOptions(retryPolicy: .none)

    /// A store on `remote` with table `todo`.
    static func store(
        _ directory: TemporaryDirectory, remote: String, apiVersion: Int?, tables: [String] = ["todo"]
    ) throws -> SyncContext {
        try SyncContext.initialize(
            directory: directory.file("store"),
            settings: StoreSettings(remote: remote, apiVersion: apiVersion, tables: tables))
    }

    /// Writes `item` on the server as another client would (protocol version 2).
    static func serverInsert(_ remote: String, _ item: JSONValue, table: String = "todo") async throws -> HTTPResponse {
        let http = ServerHTTPClient(
            baseURL: remote, defaultHeaders: [ProtocolHeader.apiVersion: "2.0.0"], retryPolicy: .none)
        return try await http.send(
            HTTPRequest(method: "POST", path: TablePath.table(table), body: CanonicalJSON.encode(item, style: .compact))
        )
    }

    /// Stands for azure-mobile-apps-node answering a duplicate insert with 409 and the *submitted* item: taken
    /// for the server's copy, it said what was sent, so the insert counted as applied and the next pull replaced
    /// the local content with the server's.
    @Test("a duplicate-id insert answered with the submitted item is a conflict with the server's real copy")
    func duplicateInsertIsAConflict() async throws {
        let node = try await AzureNodeStandIn.start(tables: ["todo"])
        let directory = TemporaryDirectory()
        #expect(try await Self.serverInsert(node.baseURL, ["id": "a", "text": "on the server"]).status == 201)
        #expect(try await Self.serverInsert(node.baseURL, ["id": "b", "text": "same words"]).status == 201)
        let context = try Self.store(directory, remote: node.baseURL, apiVersion: 2)
        let todo = try await context.table("todo")
        try await todo.insert(["id": "a", "text": "mine"])
        // The same content as the server's: an earlier attempt whose acknowledgement was lost.
        try await todo.insert(["id": "b", "text": "same words"])

        let report = try await context.push(options: Self.options)
        #expect(report.conflicts == [RecordKey(table: "todo", id: "a")])
        #expect(report.applied == 1, "b is the server's copy already")
        let conflict = try #require(try await context.conflicts().first)
        #expect(conflict.server?["text"] == "on the server", "the conflict holds the server's copy, read after the 409")
        #expect(conflict.server?["version"] != nil)
        #expect(try await todo.read(id: "a")?["text"] == "mine", "the local edit is kept")
        #expect(await context.pendingOperations.map(\.id) == ["a"])
        #expect(try await todo.read(id: "b")?["version"] != nil, "b took the server's system properties")
        await node.stop()
    }

    /// Stands for azure-mobile-apps-node 4.0.1, whose read by id answers 404 for a soft-deleted record even with
    /// `__includeDeleted=true` (only its list form returns the row): keeping the local side of an edit made while
    /// another client deleted the record filed the conflict again with no server copy, at every keep-local.
    @Test("keep-local of an edit of a record node soft-deleted brings the record back in one resolve")
    func keepLocalOverANodeDelete() async throws {
        let node = try await AzureNodeStandIn.start(tables: ["todo"])
        let directory = TemporaryDirectory()
        let context = try Self.store(directory, remote: node.baseURL, apiVersion: 2)
        let todo = try await context.table("todo")
        try await todo.insert(["id": "r1", "text": "first"])
        #expect(try await context.push(options: Self.options).applied == 1)
        let version = try #require(await node.record("r1", table: "todo")?["version"]?.stringValue)
        let http = ServerHTTPClient(
            baseURL: node.baseURL, defaultHeaders: [ProtocolHeader.apiVersion: "2.0.0"], retryPolicy: .none)
        let deleted = try await http.send(
            HTTPRequest(method: "DELETE", path: "/tables/todo/r1", headers: ["If-Match": "\"\(version)\""]))
        #expect(deleted.status == 200)

        try await todo.update(["id": "r1", "text": "edited here"])
        let refused = try await context.push(options: Self.options)
        #expect(refused.conflicts == [RecordKey(table: "todo", id: "r1")])
        let conflict = try #require(try await context.conflicts().first)
        #expect(conflict.server?["deleted"] == true, "the deleted copy, found through the list form")
        try await context.resolve(RecordKey(table: "todo", id: "r1"), .keepLocal, options: Self.options)
        let report = try await context.push(options: Self.options)
        #expect(report.applied == 1 && report.conflicts.isEmpty, "\(report)")
        let row = await node.record("r1", table: "todo")
        #expect(row?["deleted"] == false && row?["text"] == "edited here", "\(String(describing: row))")
        await node.stop()
    }

    /// Stands for azure-mobile-apps-node refusing `ZUMO-API-VERSION: 3.0.0` with 400 on every request: the push
    /// filed every pending operation as its own conflict and exited 3.
    @Test("a server refusing the protocol version stops the push once: no conflicts, the journal kept, the fix named")
    func refusedVersionStopsThePush() async throws {
        let node = try await AzureNodeStandIn.start(tables: ["todo"])
        let directory = TemporaryDirectory()
        let context = try Self.store(directory, remote: node.baseURL, apiVersion: 3)
        let todo = try await context.table("todo")
        for id in ["a", "b", "c"] { try await todo.insert(["id": .string(id), "text": "x"]) }

        let error = await #expect(throws: SyncError.self) { try await context.push(options: Self.options) }
        #expect(error == .protocolVersionRefused(url: node.baseURL, refused: 3, accepted: 2, learnedForNextRun: false))
        #expect(error?.kind == .usage)
        #expect(error?.description.contains("\"apiVersion\": 2") == true)
        #expect(try await context.conflicts().isEmpty)
        #expect(await context.pendingOperations.count == 3)
        await context.close()

        // The command line: exit 2, one sentence with the fix, nothing under conflicts/.
        let pushed = try await CLI.run(["-C", directory.file("store"), "push", "--attempts", "1"])
        #expect(pushed.status == 2, "\(pushed.stderr)")
        #expect(pushed.stderr.contains("apiVersion") && pushed.stderr.contains("3.0.0"), "\(pushed.stderr)")
        #expect(
            pushed.stderr.contains("(for a new store: tablesync init --api-version 2)."),
            "the command line names its flag: \(pushed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("store/conflicts/todo")))
        await node.stop()
    }

    /// Stands for a store made with `tablesync init` and no `--api-version` against azure-mobile-apps-node: the
    /// first contact learns version 2 and keeps it.
    @Test("a store that pins no protocol version learns it at the first contact")
    func learnsTheVersion() async throws {
        let node = try await AzureNodeStandIn.start(tables: ["todo"])
        let directory = TemporaryDirectory()
        let context = try Self.store(directory, remote: node.baseURL, apiVersion: nil)
        #expect(!(try directory.read("store/tablesync.json").contains("apiVersion")), "nothing pinned")
        try await context.table("todo").insert(["id": "a", "text": "x"])
        let report = try await context.push(options: Self.options)
        #expect(report.applied == 1)
        #expect(await node.record("a", table: "todo")?["text"] == "x")
        #expect(LearnedProtocolVersion.load(layout: context.layout, remote: node.baseURL) == 2)
        let pulled = try await context.pull(table: "todo", queryID: "all", options: Self.options)
        #expect(pulled.unchanged + pulled.written == 1)
        await node.stop()
    }

    @Test("a table the server does not serve stops the push with one refusal, not a conflict per operation")
    func unknownTableStopsThePush() async throws {
        let server = try await LiveServer.start(.sqlite, tables: ["served"])
        defer { TestBackend.removeFiles(of: server.database) }
        let directory = TemporaryDirectory()
        let context = try Self.store(directory, remote: server.baseURL, apiVersion: 3, tables: ["ghost"])
        for id in ["a", "b"] { try await context.table("ghost").insert(["id": .string(id)]) }
        let error = await #expect(throws: SyncError.self) { try await context.push(options: Self.options) }
        guard case .requestRefused(_, 404, let reason)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(reason.contains("does not serve table ghost"))
        #expect(try await context.conflicts().isEmpty)
        #expect(await context.pendingOperations.count == 2)
        await server.stop()
    }

    /// Stands for `tablesync-server --table 'todo:maxTop=100'`: every pull asked `$top=1000`, got 400 and exited 1.
    @Test("a table whose maximum page is lower is pulled in pages of its maximum")
    func learnsThePageSize() async throws {
        let table = uniqueTableName()
        let server = try await LiveServer.start(.sqlite, tables: [table]) {
            $0.tables = [TableOptions(name: table, maxTop: 100)]
        }
        defer { TestBackend.removeFiles(of: server.database) }
        for index in 0..<250 {
            _ = try await Self.serverInsert(server.baseURL, ["id": .string("r\(index)")], table: table)
        }
        let directory = TemporaryDirectory()
        let context = try Self.store(directory, remote: server.baseURL, apiVersion: 3, tables: [table])
        let report = try await context.pull(table: table, queryID: "all", options: Self.options)
        #expect(report.written == 250)
        #expect(report.pageSize == 100)
        await server.stop()
    }

    @Test(
        "a pull's progress knows how many records are to come: the server counts them on the first page",
        arguments: [2, 3])
    func progressHasATotal(apiVersion: Int) async throws {
        let table = uniqueTableName()
        let server = try await LiveServer.start(.sqlite, tables: [table])
        defer { TestBackend.removeFiles(of: server.database) }
        for index in 0..<25 {
            _ = try await Self.serverInsert(server.baseURL, ["id": .string("r\(index)")], table: table)
        }
        let directory = TemporaryDirectory()
        let context = try Self.store(directory, remote: server.baseURL, apiVersion: apiVersion, tables: [table])
        let seen = ProgressLog()
        var options = Self.options
        options.pageSize = 10
        options.progress = { seen.append($0) }
        _ = try await context.pull(table: table, queryID: "all", options: options)
        #expect(
            seen.steps == [
                .pulledPage(table: table, page: 1, records: 10, total: 25),
                .pulledPage(table: table, page: 2, records: 20, total: 25),
                .pulledPage(table: table, page: 3, records: 25, total: 25)
            ])
        await server.stop()
    }

    @Test("push progress counts each operation once: a conflict settled by client-wins does not push it past the total")
    func pushProgressStaysWithinTotal() async throws {
        let table = uniqueTableName()
        let server = try await LiveServer.start(.sqlite, tables: [table])
        defer { TestBackend.removeFiles(of: server.database) }
        _ = try await Self.serverInsert(server.baseURL, ["id": "a", "text": "theirs"], table: table)
        let directory = TemporaryDirectory()
        let context = try Self.store(directory, remote: server.baseURL, apiVersion: 3, tables: [table])
        for id in ["a", "b", "c"] { try await context.table(table).insert(["id": .string(id), "text": "mine"]) }
        let seen = ProgressLog()
        var options = Self.options
        options.conflictPolicy = .clientWins
        options.progress = { seen.append($0) }
        let report = try await context.push(options: options)
        #expect(report.settledByPolicy == 1 && report.conflicts.isEmpty)
        #expect(seen.steps.last == .pushed(settled: 3, total: 3))
        await server.stop()
    }

    @Test("after a refused page size the pull tries the size the server names, else the next step down")
    func pageSizeSteps() {
        #expect(PullPlan.smallerPageSize(than: 1000, serverMaximum: 100) == 100)
        #expect(PullPlan.smallerPageSize(than: 1000, serverMaximum: 1000) == nil, "the refusal is not about $top")
        #expect(PullPlan.smallerPageSize(than: 1000, serverMaximum: nil) == 500)
        #expect(PullPlan.smallerPageSize(than: 500, serverMaximum: nil) == 250)
        #expect(PullPlan.smallerPageSize(than: 120, serverMaximum: nil) == 100)
        #expect(PullPlan.smallerPageSize(than: 10, serverMaximum: nil) == nil)
        #expect(PullPlan.smallerPageSize(than: 100, serverMaximum: 0) == nil)
    }

    /// Stands for azure-mobile-apps-node accepting the id `bad/id`, which no store may turn into a path: every pull
    /// of the table exited 1 and wrote nothing of that page.
    @Test("a record the store cannot hold is skipped and reported; the rest of the table is pulled")
    func badRecordIsSkipped() async throws {
        let node = try await AzureNodeStandIn.start(tables: ["todo"])
        for id in ["good1", "bad/id", "good2"] {
            #expect(try await Self.serverInsert(node.baseURL, ["id": .string(id), "text": "x"]).status == 201)
            try await Task.sleep(for: .milliseconds(2))
        }
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        try await Self.store(directory, remote: node.baseURL, apiVersion: 2).close()
        let pulled = try await CLI.run(["-C", store, "pull", "todo", "--query-id", "all", "--json", "--attempts", "1"])
        #expect(pulled.status == 8, "exit 8: done, records skipped. \(pulled.stderr)")
        let report = try JSONParser.parse(Array(pulled.stdout.utf8))
        #expect(report["written"] == 2)
        let skipped = try #require(report["skipped"]?.arrayValue)
        #expect(skipped.map { $0["id"] } == ["bad/id"])
        #expect(skipped.first?["reason"]?.stringValue?.contains("bad/id") == true)

        // Pulled again: nothing new and nothing skipped in this run (exit 0), but status still lists the record.
        let again = try await CLI.run(["-C", store, "pull", "todo", "--query-id", "all", "--attempts", "1"])
        #expect(again.status == 0, "\(again.stderr)")
        let status = try await SyncContext(directory: store, mode: .readOnly).status()
        #expect(
            status.skippedServerRecords == [
                SkippedServerRecord(table: "todo", id: "bad/id", reason: skipped.first?["reason"]?.stringValue ?? "")
            ])
        let statusText = try await CLI.run(["-C", store, "status"])
        #expect(statusText.stdout.contains("todo/bad/id"), "\(statusText.stdout)")
        let written = try FileManager.default.contentsOfDirectory(atPath: store + "/tables/todo").sorted()
        #expect(written == ["good1.json", "good2.json"])
        await node.stop()
    }
}

/// Progress steps as a run reports them, from any thread.
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [SyncProgress] = []
    func append(_ step: SyncProgress) { lock.withLock { recorded.append(step) } }
    var steps: [SyncProgress] { lock.withLock { recorded } }
}
