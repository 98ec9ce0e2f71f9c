import Foundation
import SyncProtocol
import Synchronization
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// Push, pull, conflicts and purge against `tablesync-server` over loopback, on SQLite and PostgreSQL.
@Suite("Sync against a live server", .serialized) struct SyncTests {
    static let backends = TestBackend.available

    /// A server serving one fresh table and two stores (two devices) pointing at it.
    struct Fixture {
        let server: LiveServer
        let table: String
        let directory: TemporaryDirectory
        let first: SyncContext
        let second: SyncContext
        let options = SyncOptions(retryPolicy: .none)

        static func make(_ backend: TestBackend, apiVersion: Int = 3) async throws -> Fixture {
            let table = uniqueTableName()
            let server = try await LiveServer.start(backend, tables: [table])
            let directory = TemporaryDirectory()
            let settings = StoreSettings(remote: server.baseURL, apiVersion: apiVersion, tables: [table])
            return Fixture(
                server: server, table: table, directory: directory,
                first: try SyncContext.initialize(directory: directory.file("first"), settings: settings),
                second: try SyncContext.initialize(directory: directory.file("second"), settings: settings))
        }

        func records(_ context: SyncContext) async throws -> [String: [String: JSONValue]] {
            let all = try await context.table(table).query()
            return Dictionary(uniqueKeysWithValues: all.map { ($0["id"]!.stringValue!, $0) })
        }

        func stop() async {
            await server.stop()
            TestBackend.removeFiles(of: server.database)
        }
    }

    @Test("the seed scenario: offline changes survive a restart and one sync delivers them", arguments: backends)
    func seedScenario(_ backend: TestBackend) async throws {
        let fixture = try await Fixture.make(backend)
        let table = fixture.table
        let port = fixture.server.port
        await fixture.server.stop()
        try await fixture.first.table(table).insert(["id": "milk", "text": "Buy milk", "complete": false])
        try await fixture.first.table(table).insert(["id": "dog", "text": "Walk the dog", "complete": false])
        try await fixture.first.table(table).update(["id": "dog", "text": "Walk the dog", "complete": true])
        await #expect(throws: SyncError.self) { try await fixture.first.push(options: fixture.options) }
        let root = fixture.first.layout.root
        let database = fixture.server.database
        let directory = fixture.directory
        await fixture.first.close()
        // The process restarts: the changes are still there, still pending.
        let reopened = try SyncContext(directory: root)
        #expect(try await reopened.table(table).read(id: "dog")?["complete"] == true)
        #expect(await reopened.pendingOperations.count == 2)
        // The server comes back on the same database and port; one sync delivers everything.
        let server = try await LiveServer.start(backend, tables: [table], database: database, port: port)
        defer { TestBackend.removeFiles(of: server.database) }
        try await reopened.addQuery(PullQuery(id: "all", table: table))
        let report = try await reopened.sync(options: SyncOptions(retryPolicy: .none))
        #expect(report.push.applied == 2)
        #expect(await reopened.pendingOperations.isEmpty)
        #expect(
            try await reopened.table(table).read(id: "milk")?["version"]?.stringValue != nil,
            "the server's copy was written back")
        // A change made on another device comes back on the next pull.
        let settings = StoreSettings(remote: server.baseURL, tables: [table])
        let other = try SyncContext.initialize(directory: directory.file("other"), settings: settings)
        try await other.pull(table: table, queryID: "all", options: SyncOptions(retryPolicy: .none))
        var milk = try #require(try await other.table(table).read(id: "milk"))
        milk["complete"] = true
        try await other.table(table).update(milk)
        try await other.push(options: SyncOptions(retryPolicy: .none))
        let pulled = try await reopened.pull(table: table, queryID: "all", options: SyncOptions(retryPolicy: .none))
        #expect(pulled.written == 1)
        #expect(try await reopened.table(table).read(id: "milk")?["complete"] == true)
        await server.stop()
    }

    @Test("each collapse case reaches the server as one request at most", arguments: backends)
    func collapsedOperations(_ backend: TestBackend) async throws {
        let fixture = try await Fixture.make(backend)
        let todo = try await fixture.first.table(fixture.table)
        try await todo.insert(["id": "a", "text": "one"])
        try await todo.update(["id": "a", "text": "two"])
        try await todo.insert(["id": "gone", "text": "never sent"])
        try await todo.delete(id: "gone")
        var report = try await fixture.first.push(options: fixture.options)
        #expect(report.requests == 1 && report.applied == 1)
        try await todo.update(["id": "a", "text": "three"])
        try await todo.update(["id": "a", "text": "four"])
        report = try await fixture.first.push(options: fixture.options)
        #expect(report.requests == 1)
        try await fixture.second.pull(table: fixture.table, queryID: "q", options: fixture.options)
        #expect(try await fixture.records(fixture.second)["a"]?["text"] == "four")
        #expect(try await fixture.records(fixture.second)["gone"] == nil)
        try await todo.update(["id": "a", "text": "five"])
        try await todo.delete(id: "a")
        report = try await fixture.first.push(options: fixture.options)
        #expect(report.requests == 1 && report.applied == 1)
        let pulled = try await fixture.second.pull(table: fixture.table, queryID: "q", options: fixture.options)
        #expect(pulled.removed == 1)
        #expect(try await fixture.records(fixture.second).isEmpty)
        await fixture.stop()
    }

    @Test("a hand edit made while its push is in flight survives the write-back", arguments: backends)
    func writeBackKeepsNewerEdit(_ backend: TestBackend) async throws {
        let fixture = try await Fixture.make(backend)
        let todo = try await fixture.first.table(fixture.table)
        try await todo.insert(["id": "a", "text": "sent"])
        try await fixture.first.push(options: fixture.options)
        let serverCopy = try #require(try await todo.read(id: "a"))
        // The push read "sent"; before its answer is written back, a person edits the file.
        let path = fixture.first.layout.recordFile(table: fixture.table, id: "a")
        let sentBytes = try FileSystem.readFile(path)
        try Data("{\"id\": \"a\", \"text\": \"edited meanwhile\"}".utf8).write(to: URL(fileURLWithPath: path))
        var newer = serverCopy
        newer["version"] = "v-after-push"
        _ = try await fixture.first.applySynced(
            table: fixture.table, records: [try ServerRecord(newer)],
            guard: .sentContent(["a": SentFile(hash: ContentHash.of(sentBytes))]))
        #expect(try await todo.read(id: "a")?["text"] == "edited meanwhile")
        let status = try await fixture.first.status()
        #expect(status.handEdits.map(\.id) == ["a"])
        #expect(
            status.handEdits.first?.baseVersion == "v-after-push", "the edit goes out on top of what the server now has"
        )
        await fixture.stop()
    }

    @Test("412 and 409 conflicts under each policy", arguments: backends)
    func conflictPolicies(_ backend: TestBackend) async throws {
        let fixture = try await Fixture.make(backend)
        let table = fixture.table
        let mine = try await fixture.first.table(table)
        let theirs = try await fixture.second.table(table)
        for id in ["manual", "server", "client"] { try await mine.insert(["id": .string(id), "text": "base"]) }
        try await fixture.first.push(options: fixture.options)
        try await fixture.second.pull(table: table, queryID: "q", options: fixture.options)
        for id in ["manual", "server", "client"] {
            try await theirs.update(["id": .string(id), "text": "theirs"])
            try await mine.update(["id": .string(id), "text": "mine"])
        }
        try await fixture.second.push(options: fixture.options)

        var manual = fixture.options
        manual.conflictPolicy = .manual
        let first = try await fixture.first.push(tables: [table], options: manual)
        #expect(first.conflicts.count == 3)
        #expect(try await fixture.first.conflicts().map(\.status) == [412, 412, 412])
        let again = try await fixture.first.push(options: manual)
        #expect(again.waiting.count == 3 && again.requests == 0, "a conflict waiting for a person is not sent again")

        try await fixture.first.resolve(RecordKey(table: table, id: "server"), .takeServer)
        #expect(try await mine.read(id: "server")?["text"] == "theirs")
        try await fixture.first.resolve(RecordKey(table: table, id: "client"), .keepLocal)
        let afterResolve = try await fixture.first.push(options: manual)
        #expect(afterResolve.applied == 1)
        try await fixture.second.pull(table: table, queryID: "q", options: fixture.options)
        #expect(try await theirs.read(id: "client")?["text"] == "mine")
        try await fixture.first.resolve(RecordKey(table: table, id: "manual"), .discard)
        #expect(try await mine.read(id: "manual") == nil)
        #expect(try await fixture.first.conflicts().isEmpty)
        #expect(await fixture.first.pendingOperations.isEmpty)

        // Policies applied by the push itself, and a 409 (an insert whose id exists).
        try await theirs.update(["id": "server", "text": "theirs again"])
        try await theirs.update(["id": "client", "text": "theirs again"])
        try await fixture.second.push(options: fixture.options)
        try await mine.update(["id": "server", "text": "mine again"])
        var serverWins = fixture.options
        serverWins.conflictPolicy = .serverWins
        let settled = try await fixture.first.push(options: serverWins)
        #expect(settled.settledByPolicy == 1 && settled.conflicts.isEmpty)
        #expect(try await mine.read(id: "server")?["text"] == "theirs again")
        try await mine.update(["id": "client", "text": "mine again"])
        try await theirs.insert(["id": "dup", "text": "theirs"])
        try await fixture.second.push(options: fixture.options)
        try await mine.insert(["id": "dup", "text": "mine"])
        var clientWins = fixture.options
        clientWins.conflictPolicy = .clientWins
        let forced = try await fixture.first.push(options: clientWins)
        #expect(forced.settledByPolicy == 2 && forced.conflicts.isEmpty)
        try await fixture.second.pull(table: table, queryID: "q", options: fixture.options)
        #expect(try await theirs.read(id: "client")?["text"] == "mine again")
        #expect(try await theirs.read(id: "dup")?["text"] == "mine")
        await fixture.stop()
    }

    @Test("a retried operation whose first answer was lost counts as applied", arguments: backends)
    func lostAcknowledgement(_ backend: TestBackend) async throws {
        let fixture = try await Fixture.make(backend)
        let todo = try await fixture.first.table(fixture.table)
        try await todo.insert(["id": "a", "text": "x"])
        let client = TableClient.make(settings: fixture.first.settings, apiVersion: 3, retryPolicy: .none)
        // The insert reaches the server, but the answer never comes back: the journal still holds it.
        _ = try await client.insert(
            table: fixture.table, body: CanonicalJSON.encode(["id": "a", "text": "x"], style: .compact))
        let retried = try await fixture.first.push(options: fixture.options)
        #expect(retried.applied == 1 && retried.conflicts.isEmpty)
        // The same for an update.
        try await todo.update(["id": "a", "text": "y"])
        let base = try #require(await fixture.first.pendingOperations.first?.baseVersion)
        _ = try await client.update(
            table: fixture.table, id: "a", body: CanonicalJSON.encode(["id": "a", "text": "y"], style: .compact),
            baseVersion: base)
        let retriedUpdate = try await fixture.first.push(options: fixture.options)
        #expect(retriedUpdate.applied == 1 && retriedUpdate.conflicts.isEmpty)
        #expect(try await fixture.first.conflicts().isEmpty)
        await fixture.stop()
    }

    @Test("incremental pull pages without missing or repeating a record", arguments: backends, [1, 2, 100])
    func incrementalPull(_ backend: TestBackend, pageSize: Int) async throws {
        let fixture = try await Fixture.make(backend)
        let todo = try await fixture.first.table(fixture.table)
        for index in 0..<7 { try await todo.insert(["id": .string("r\(index)"), "n": .integer(Int64(index))]) }
        try await fixture.first.push(options: fixture.options)
        var options = fixture.options
        options.pageSize = pageSize
        let first = try await fixture.second.pull(table: fixture.table, queryID: "q", options: options)
        #expect(first.written == 7 && first.unchanged == 0)
        #expect(try await fixture.records(fixture.second).count == 7)
        let nothing = try await fixture.second.pull(table: fixture.table, queryID: "q", options: options)
        #expect(nothing.written == 0 && nothing.unchanged == 0, "nothing is fetched again once the watermark passed it")
        for index in 7..<10 { try await todo.insert(["id": .string("r\(index)"), "n": .integer(Int64(index))]) }
        try await todo.update(["id": "r0", "n": 100])
        try await fixture.first.push(options: fixture.options)
        let more = try await fixture.second.pull(table: fixture.table, queryID: "q", options: options)
        #expect(more.written == 4 && more.unchanged == 0)
        #expect(try await fixture.records(fixture.second)["r0"]?["n"] == 100)
        await fixture.stop()
    }

    @Test("a pull killed between pages resumes from the last durable page", arguments: backends)
    func pullResumes(_ backend: TestBackend) async throws {
        let fixture = try await Fixture.make(backend)
        let todo = try await fixture.first.table(fixture.table)
        for index in 0..<6 { try await todo.insert(["id": .string("r\(index)")]) }
        try await fixture.first.push(options: fixture.options)
        var options = fixture.options
        options.pageSize = 2
        try await fixture.second.pull(table: fixture.table, queryID: "q", options: options)
        // In pull order: by updatedAt as a time (a batch's writes share a millisecond, and text order is not time order
        // then), then id.
        func key(_ record: [String: JSONValue]) -> (Int64, String) {
            (Timestamp(parsing: record["updatedAt"]!.stringValue!)!.ticks, record["id"]!.stringValue!)
        }
        let records = try await fixture.records(fixture.second).values.sorted { key($0) < key($1) }
        // As if the run died after its first page: two records and that page's watermark are on disk.
        _ = try await fixture.second.purge(table: fixture.table, filter: nil)
        _ = try await fixture.second.applySynced(
            table: fixture.table, records: try records.prefix(2).map(ServerRecord.init))
        try await fixture.second.saveQuery(
            PullQuery(
                id: "q", table: fixture.table, updatedAt: records[1]["updatedAt"]!.stringValue!,
                lastID: records[1]["id"]!.stringValue!))
        let resumed = try await fixture.second.pull(table: fixture.table, queryID: "q", options: options)
        #expect(resumed.written == 4)
        #expect(try await fixture.records(fixture.second).count == 6)
        await fixture.stop()
    }

    @Test("pull removes deleted records and keeps records with local changes", arguments: backends)
    func pullKeepsLocalChanges(_ backend: TestBackend) async throws {
        let fixture = try await Fixture.make(backend)
        let mine = try await fixture.first.table(fixture.table)
        for id in ["keep", "edit", "drop"] { try await mine.insert(["id": .string(id), "text": "v1"]) }
        try await fixture.first.push(options: fixture.options)
        try await fixture.second.pull(table: fixture.table, queryID: "q", options: fixture.options)
        try await mine.update(["id": "edit", "text": "server v2"])
        try await mine.delete(id: "drop")
        try await fixture.first.push(options: fixture.options)
        // A hand edit not yet pushed: the pull must not overwrite it (and its push then conflicts).
        let path = fixture.second.layout.recordFile(table: fixture.table, id: "edit")
        let current = try #require(try await fixture.second.table(fixture.table).read(id: "edit"))
        var handEdited = current
        handEdited["text"] = "local edit"
        try Data(CanonicalJSON.encode(.object(handEdited))).write(to: URL(fileURLWithPath: path))
        let report = try await fixture.second.pull(table: fixture.table, queryID: "q", options: fixture.options)
        #expect(report.removed == 1)
        #expect(try await fixture.second.table(fixture.table).read(id: "drop") == nil)
        #expect(try await fixture.second.table(fixture.table).read(id: "edit")?["text"] == "local edit")
        #expect(report.push.conflicts.map(\.id) == ["edit"])
        await fixture.stop()
    }

    @Test("purge refuses to drop local changes unless forced, and resets watermarks", arguments: backends)
    func purge(_ backend: TestBackend) async throws {
        let fixture = try await Fixture.make(backend)
        let todo = try await fixture.first.table(fixture.table)
        for index in 0..<4 { try await todo.insert(["id": .string("r\(index)"), "n": .integer(Int64(index))]) }
        try await fixture.first.push(options: fixture.options)
        try await fixture.second.pull(table: fixture.table, queryID: "q", options: fixture.options)
        #expect(try await fixture.second.purge(table: fixture.table, filter: "n ge 2").removed == 2)
        #expect(try await fixture.records(fixture.second).keys.sorted() == ["r0", "r1"])
        #expect(try await fixture.second.queries().queries["q"]?.updatedAt == nil)
        try await fixture.second.pull(table: fixture.table, queryID: "q", options: fixture.options)
        #expect(
            try await fixture.records(fixture.second).count == 4, "a pull after a purge brings back what still matches")
        try await fixture.second.table(fixture.table).insert(["id": "local"])
        await #expect(throws: PurgeRefused.self) { try await fixture.second.purge(table: fixture.table) }
        let forced = try await fixture.second.purge(table: fixture.table, force: true)
        #expect(forced == PurgeReport(removed: 5, droppedOperations: 1, droppedHandChanges: 0, droppedConflicts: 0))
        #expect(await fixture.second.pendingOperations.isEmpty)
        #expect(try await fixture.records(fixture.second).isEmpty)
        await fixture.stop()
    }

    @Test("the v2 protocol and the SDKs' ge + $skip paging", arguments: backends, [1, 3])
    func protocolV2WithSkipPaging(_ backend: TestBackend, pageSize: Int) async throws {
        let fixture = try await Fixture.make(backend, apiVersion: 2)
        let todo = try await fixture.first.table(fixture.table)
        for index in 0..<5 { try await todo.insert(["id": .string("r\(index)"), "n": .integer(Int64(index))]) }
        try await fixture.first.push(options: fixture.options)
        try await todo.update(["id": "r1", "n": 10])
        try await todo.delete(id: "r2")
        try await fixture.first.push(options: fixture.options)
        var options = fixture.options
        options.paging = .greaterOrEqualWithSkip
        options.pageSize = pageSize
        let report = try await fixture.second.pull(table: fixture.table, queryID: "q", options: options)
        #expect(report.written == 4)
        let records = try await fixture.records(fixture.second)
        #expect(records.keys.sorted() == ["r0", "r1", "r3", "r4"])
        #expect(records["r1"]?["n"] == 10)
        let again = try await fixture.second.pull(table: fixture.table, queryID: "q", options: options)
        #expect(again.written == 0, "ge re-reads the boundary record, which is unchanged")
        await fixture.stop()
    }

    @Test("two syncs with nothing new leave every file byte-identical", arguments: backends)
    func idleSyncWritesNothing(_ backend: TestBackend) async throws {
        let fixture = try await Fixture.make(backend)
        let todo = try await fixture.first.table(fixture.table)
        for index in 0..<5 { try await todo.insert(["id": .string("r\(index)"), "text": .string("é \(index)")]) }
        try await fixture.first.addQuery(PullQuery(id: "all", table: fixture.table))
        _ = try await fixture.first.sync(options: fixture.options)
        let before = try Self.snapshot(fixture.first.layout.root)
        _ = try await fixture.first.sync(options: fixture.options)
        _ = try await fixture.first.sync(options: fixture.options)
        #expect(try Self.snapshot(fixture.first.layout.root) == before)
        await fixture.stop()
    }

    @Test("a sync asks the server what it offers once, for its push and all its pulls")
    func syncAsksForFeaturesOnce() async throws {
        let fixture = try await Fixture.make(.sqlite)
        let todo = try await fixture.first.table(fixture.table)
        for index in 0..<3 { try await todo.insert(["id": .string("r\(index)")]) }
        try await fixture.first.addQuery(PullQuery(id: "all", table: fixture.table))
        try await fixture.first.addQuery(PullQuery(id: "some", table: fixture.table, filter: "id ne 'r0'"))
        let transport = RequestLog()
        var options = fixture.options
        options.transport = transport
        let report = try await fixture.first.sync(options: options)
        #expect(report.push.applied == 3 && report.pulls.count == 2)
        let requests = transport.requests
        #expect(requests.filter { $0 == "GET /health" }.count == 1, "\(requests)")
        #expect(
            requests.contains("POST /batch") && requests.filter { $0.hasPrefix("GET /tables/") }.count >= 2,
            "\(requests)")
        await fixture.stop()
    }

    /// The platform's transport, noting each request's method and path: what a sync asks of the real server.
    private final class RequestLog: HTTPTransport {
        private let log = Mutex<[String]>([])
        var requests: [String] { log.withLock { $0 } }

        func exchange(_ request: TransportRequest) async throws -> TransportAnswer {
            let parts = request.url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
            let path = parts.count > 3 ? "/" + parts[3] : "/"
            log.withLock { $0.append("\(request.method) \(path.split(separator: "?").first ?? "")") }
            return try await PlatformTransport.shared.exchange(request)
        }
    }

    @Test("an unreachable server and refused credentials stop the push with the journal intact")
    func failuresKeepTheJournal() async throws {
        let table = uniqueTableName()
        let server = try await LiveServer.start(.sqlite, tables: [table], tokens: ["secret-token"])
        defer { TestBackend.removeFiles(of: server.database) }
        let directory = TemporaryDirectory()
        let context = try SyncContext.initialize(
            directory: directory.file("store"), settings: StoreSettings(remote: server.baseURL, tables: [table]))
        try await context.table(table).insert(["id": "a"])
        var options = SyncOptions(retryPolicy: .none).with { $0.environment = [:] }
        await #expect { try await context.push(options: options) } throws: { error in
            (error as? SyncError)?.kind == .authentication
        }
        #expect(await context.pendingOperations.count == 1)
        options.environment = ["TABLESYNC_TOKEN": "secret-token"]
        #expect(try await context.push(options: options).applied == 1)
        #expect(
            !(try String(contentsOfFile: directory.file("store/tablesync.json"), encoding: .utf8).contains(
                "secret-token")))
        await server.stop()
        try await context.table(table).insert(["id": "b"])
        await #expect { try await context.push(options: options) } throws: { error in
            (error as? SyncError)?.kind == .unreachable
        }
        #expect(await context.pendingOperations.map(\.id) == ["b"])
    }

    @Test(
        """
        a store of an earlier version that lost its cache compares its files with the server page by page: nothing \
        sent for unchanged files
        """,
        arguments: backends)
    func lostCacheComparedInPages(_ backend: TestBackend) async throws {
        let fixture = try await Fixture.make(backend)
        let table = fixture.table
        for number in 0..<45 {
            try await fixture.first.table(table).insert(["id": .string("r\(number)"), "text": "item"])
        }
        try await fixture.first.push(options: fixture.options)
        // The server moves on for r0; r1 is edited by hand while the cache is gone.
        try await fixture.second.pull(table: table, options: fixture.options)
        try await fixture.second.table(table).update(["id": "r0", "text": "changed on the server"])
        try await fixture.second.push(options: fixture.options)
        let root = fixture.first.layout.root
        await fixture.first.close()
        for paging in [PullPaging.keyset, .greaterOrEqualWithSkip] {
            try FileManager.default.removeItem(atPath: root + "/.tablesync")
            // Files as an earlier version wrote them, without the synced mark: only the server can tell what they are.
            for name in try FileManager.default.contentsOfDirectory(atPath: root + "/tables/\(table)") {
                let file = root + "/tables/\(table)/" + name
                let bytes = try #require(FileManager.default.contents(atPath: file))
                let record = try #require(try JSONParser.parse(Array(bytes)).objectValue)
                try Data(CanonicalJSON.encode(.object(record.filter { $0.key != "@synced" }))).write(
                    to: URL(fileURLWithPath: file))
            }
            let path = root + "/tables/\(table)/r1.json"
            let bytes = try #require(FileManager.default.contents(atPath: path))
            var record = try #require(try JSONParser.parse(Array(bytes)).objectValue)
            record["text"] = .string("edited by hand, \(paging)")
            try Data(CanonicalJSON.encode(.object(record))).write(to: URL(fileURLWithPath: path))
            let store = try SyncContext(directory: root)
            let status = try await store.status()
            #expect(status.handEdits.count == 45 && status.handEdits.allSatisfy { $0.kind == .uncompared })
            // Pages of 10 (more than 20 files make the push read the table instead of each record).
            let options = SyncOptions(retryPolicy: .none, pageSize: 10).with { $0.paging = paging }
            let report = try await store.push(options: options)
            #expect(report.applied == 1, "only the hand edit is sent (\(paging)): \(report)")
            #expect(report.adoption.edited == 1)
            if paging == .keyset {
                #expect(report.adoption.unchanged == 43)
                #expect(
                    report.adoption.conflicts == [RecordKey(table: table, id: "r0")], "moved on, and the file differs")
                try await store.resolve(RecordKey(table: table, id: "r0"), .takeServer)
            } else {
                #expect(report.adoption.unchanged == 44, "r0 now holds the server's copy")
                #expect(report.adoption.conflicts.isEmpty)
            }
            #expect(try await store.status().isClean)
            await store.close()
        }
        try await fixture.second.pull(table: table, options: fixture.options)
        #expect(
            try await fixture.second.table(table).read(id: "r1")?["text"] == "edited by hand, greaterOrEqualWithSkip")
        await fixture.stop()
    }

    @Test("pull --evict removes records that left the query; the brake stops mass removals", arguments: backends)
    func evictAndMassDeleteBrake(_ backend: TestBackend) async throws {
        let fixture = try await Fixture.make(backend)
        let mine = try await fixture.first.table(fixture.table)
        for index in 0..<12 { try await mine.insert(["id": .string("r\(index)"), "open": true]) }
        try await fixture.first.push(options: fixture.options)
        try await fixture.second.pull(
            table: fixture.table, queryID: "open", filter: "open eq true", options: fixture.options)
        try await mine.update(["id": "r0", "open": false])
        try await fixture.first.push(options: fixture.options)
        var evicting = fixture.options
        evicting.evict = true
        let report = try await fixture.second.pull(table: fixture.table, queryID: "open", options: evicting)
        #expect(report.evicted == 1)
        #expect(try await fixture.records(fixture.second)["r0"] == nil)

        for index in 1..<9 { try await mine.delete(id: "r\(index)") }
        try await fixture.first.push(options: fixture.options)
        await #expect(throws: MassDeleteRefused.self) {
            try await fixture.second.pull(table: fixture.table, queryID: "open", options: fixture.options)
        }
        #expect(try await fixture.records(fixture.second).count == 11, "nothing was removed")
        var allowed = fixture.options
        allowed.allowMassDelete = true
        let removed = try await fixture.second.pull(table: fixture.table, queryID: "open", options: allowed)
        #expect(removed.removed == 8)
        await fixture.stop()
    }

    @Test("the command line's exit codes for conflicts, an unreachable server and refused credentials")
    func commandLineExitCodes() async throws {
        let table = uniqueTableName()
        let server = try await LiveServer.start(.sqlite, tables: [table], tokens: ["tok"])
        defer { TestBackend.removeFiles(of: server.database) }
        let tablesync = builtProduct("tablesync")
        let directory = TemporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["TABLESYNC_TOKEN"] = nil
        for store in ["a", "b"] {
            _ = try await runProgram(
                tablesync, ["-C", directory.file(store), "init", "--remote", server.baseURL, "--table", table])
        }
        _ = try await runProgram(tablesync, ["-C", directory.file("a"), "insert", table, #"{"id": "x", "n": 1}"#])
        #expect(
            try await runProgram(
                tablesync, ["-C", directory.file("a"), "push", "--attempts", "1"], environment: environment
            ).status == 5)
        environment["TABLESYNC_TOKEN"] = "tok"
        let pushed = try await runProgram(
            tablesync, ["-C", directory.file("a"), "push", "--json"], environment: environment)
        #expect(pushed.status == 0)
        #expect(try JSONParser.parse(pushed.stdout)["applied"] == 1)
        #expect(
            try await runProgram(
                tablesync, ["-C", directory.file("b"), "pull", table, "--query-id", "q"], environment: environment
            ).status == 0)
        _ = try await runProgram(tablesync, ["-C", directory.file("a"), "update", table, #"{"id": "x", "n": 2}"#])
        _ = try await runProgram(tablesync, ["-C", directory.file("b"), "update", table, #"{"id": "x", "n": 3}"#])
        #expect(
            try await runProgram(tablesync, ["-C", directory.file("a"), "sync"], environment: environment).status == 0)
        let conflicted = try await runProgram(tablesync, ["-C", directory.file("b"), "sync"], environment: environment)
        #expect(conflicted.status == 3)
        // The text shows both sides, property by property: the server's n (a's 2) against the local n (b's 3).
        let listed = try await runProgram(tablesync, ["-C", directory.file("b"), "conflicts"], environment: environment)
        #expect(listed.status == 3)
        let lines = listed.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("\(table)/x\tupdate refused (HTTP 412)") == true, "\(listed.stdout)")
        #expect(lines.contains { $0.hasPrefix("    --- server (version ") }, "\(listed.stdout)")
        #expect(Array(lines.suffix(3)) == ["    +++ local", "    - n: 2", "    + n: 3"], "\(listed.stdout)")
        #expect(
            try await runProgram(tablesync, ["-C", directory.file("b"), "resolve", "\(table)/x", "--take-server"])
                .status == 0)
        #expect(try await runProgram(tablesync, ["-C", directory.file("b"), "conflicts"]).status == 0)
        await server.stop()
        _ = try await runProgram(tablesync, ["-C", directory.file("a"), "insert", table, #"{"id": "y"}"#])
        let unreachable = try await runProgram(
            tablesync, ["-C", directory.file("a"), "sync", "--attempts", "1", "--timeout", "2"],
            environment: environment)
        #expect(unreachable.status == 4)
        #expect(unreachable.stderr.contains("could not be reached"))
    }

    /// Every file of a store but the machine-local cache, with its bytes.
    static func snapshot(_ root: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            if relative.hasPrefix(".tablesync") { continue }
            var isDirectory: ObjCBool = false
            let path = root + "/" + relative
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        }
        return files
    }
}
