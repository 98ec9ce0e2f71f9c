import Foundation
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport
@testable import TableSync

/// A record the server cannot take never holds back the others: it is set aside with its reason, and the push goes
/// on. The server's failure is made by ``LoopbackProxy`` (a real server cannot be made to fail on one record every
/// time); the record too large is refused by the real server's own limit, which it announces in `/health`.
@Suite(.serialized) struct SetAsideTests {
    /// A store of `count` records on a live server behind a fault proxy, every record then edited by hand, one of
    /// them (`poison`) answered 500 by the proxy every time and one (`huge`) above the server's size limit.
    struct Setup {
        let directory = TemporaryDirectory()
        let server: LiveServer
        let proxy: LoopbackProxy
        var store: String { directory.file("store") }

        init(count: Int) async throws {
            server = try await LiveServer.start(.sqlite, tables: ["todo"]) { $0.maxBodySize = 64 * 1024 }
            proxy = try LoopbackProxy(.faults(upstreamPort: server.port))
            #expect(try await CLI.run(["-C", store, "init", "--remote", proxy.baseURL, "--table", "todo"]).status == 0)
            for number in 0..<count {
                let id = number == count / 2 ? "poison" : number == count / 3 ? "huge" : "r\(number)"
                try directory.write("store/tables/todo/\(id).json", #"{"id": "\#(id)", "text": "before"}"# + "\n")
            }
            let first = try await CLI.run(["-C", store, "push", "--json"])
            #expect(first.status == 0, "\(first.stdout) \(first.stderr)")
            for name in try FileManager.default.contentsOfDirectory(atPath: store + "/tables/todo") {
                let path = store + "/tables/todo/" + name
                let bytes = try #require(FileManager.default.contents(atPath: path))
                var record = try #require(try JSONParser.parse(Array(bytes)).objectValue)
                record["text"] = .string(
                    name == "huge.json" ? String(repeating: "a long text ", count: 8_000) : "after")
                try Data(CanonicalJSON.encode(.object(record))).write(to: URL(fileURLWithPath: path))
            }
            // Every request that carries the poison record fails, batched or alone, however often it is sent.
            proxy.inject(.status(500), bodyContains: #""poison""#, times: 1_000)
        }

        func stop() async {
            proxy.stop()
            await server.stop()
            TestBackend.removeFiles(of: server.database)
        }
    }

    @Test(
        """
        2,000 pending updates, one the server fails on every time and one above its size limit: the rest reach the \
        server, the two are set aside with their reasons, exit 3
        """,
        arguments: [false, true])
    func oneRecordNeverBlocksAPush(oneRequestEach: Bool) async throws {
        let count = oneRequestEach ? 300 : 2_000
        let setup = try await Setup(count: count)
        let push = try await CLI.run(
            ["-C", setup.store, "push", "--json", "--attempts", "2"] + (oneRequestEach ? ["--no-batch"] : []))
        #expect(push.status == 3, "conflicts wait: \(push.stdout) \(push.stderr)")
        let report = try JSONParser.parse(Array(push.stdout.utf8))
        #expect(report["applied"] == .integer(Int64(count - 2)), "every other record went: \(push.stdout.prefix(300))")
        #expect(report["rejected"] == ["todo/huge", "todo/poison"], "\(report["rejected"] ?? .null)")

        let rows = try await Reliability.serverRows(setup.server.baseURL, table: "todo")
        #expect(rows.filter { $0.value["text"] == "after" }.count == count - 2)
        #expect(rows["poison"]?["text"] == "before" && rows["huge"]?["text"] == "before")

        let conflicts = try JSONParser.parse(
            Array(try await CLI.run(["-C", setup.store, "conflicts", "--json"]).stdout.utf8))
        let filed = Dictionary(
            uniqueKeysWithValues: (conflicts["conflicts"]?.arrayValue ?? []).compactMap { conflict in
                conflict["record"]?.stringValue.map { ($0, conflict) }
            })
        let poison = filed["todo/poison"]?["reason"]?.stringValue ?? ""
        #expect(
            poison.contains("the server fails on this record every time (HTTP 500")
                && poison.contains("tablesync resolve todo/poison --keep-local"),
            "the reason, and how to send it again: \(poison)")
        if oneRequestEach {
            #expect(
                filed["todo/huge"]?["status"] == 413,
                "sent alone, the server refuses it itself: \(filed["todo/huge"] ?? .null)")
        } else {
            let huge = filed["todo/huge"]?["reason"]?.stringValue ?? ""
            #expect(filed["todo/huge"]?["status"] == .null, "refused here, before sending")
            #expect(
                huge.contains("more than the") && huge.contains("tablesync resolve todo/huge --keep-local"), "\(huge)")
        }

        // Once the server takes it, keeping the local side sends the record again.
        setup.proxy.clearFaults()
        #expect(try await CLI.run(["-C", setup.store, "resolve", "todo/poison", "--keep-local"]).status == 0)
        let again = try await CLI.run(["-C", setup.store, "push", "--json"])
        #expect(try JSONParser.parse(Array(again.stdout.utf8))["applied"] == 1, "\(again.stdout)")
        #expect(try await Reliability.serverRows(setup.server.baseURL, table: "todo")["poison"]?["text"] == "after")
        await setup.stop()
    }

    /// Stands for a person who gives up on an edit the server will not take (too large, or failing there every
    /// time) and takes the server's side: the refusal carried no copy of the server's record, and taking the server's
    /// side only dropped the operation, so the file kept the edit and the next push sent it again.
    @Test("resolve --take-server on a record set aside reads the server's copy: the edit is gone and not sent again")
    func takeServerOfARecordSetAside() async throws {
        let setup = try await Setup(count: 30)
        // A record the server never had, too large as well: taking the server's side removes it.
        try setup.directory.write(
            "store/tables/todo/new-huge.json",
            #"{"id": "new-huge", "text": "\#(String(repeating: "a long text ", count: 8_000))"}"# + "\n")
        let push = try await CLI.run(["-C", setup.store, "push", "--json", "--attempts", "1"])
        #expect(push.status == 3, "\(push.stdout) \(push.stderr)")
        #expect(
            try JSONParser.parse(Array(push.stdout.utf8))["rejected"] == ["todo/huge", "todo/new-huge", "todo/poison"])

        for record in ["todo/huge", "todo/new-huge"] {
            let resolve = try await CLI.run(["-C", setup.store, "resolve", record, "--take-server"])
            #expect(resolve.status == 0, "\(resolve.stdout) \(resolve.stderr)")
        }
        let huge = try JSONParser.parse(Array(try setup.directory.read("store/tables/todo/huge.json").utf8))
        #expect(huge["text"] == "before", "the server's copy is in the file")
        #expect(huge["version"] != nil)
        #expect(!setup.directory.exists("store/tables/todo/new-huge.json"), "the server has no such record")

        let status = try await CLI.run(["-C", setup.store, "status", "--json"])
        #expect(!status.stdout.contains("todo/huge") && !status.stdout.contains("new-huge"), "\(status.stdout)")
        setup.proxy.clearFaults()
        let again = try await CLI.run(["-C", setup.store, "push", "--json"])
        #expect(try JSONParser.parse(Array(again.stdout.utf8))["applied"] == 0, "only poison waits: \(again.stdout)")
        let rows = try await Reliability.serverRows(setup.server.baseURL, table: "todo")
        #expect(rows["huge"]?["text"] == "before" && rows["new-huge"] == nil)
        await setup.stop()
    }

    @Test(
        """
        a string holding U+0000, which PostgreSQL cannot store, is refused for its record alone; the rest of its batch \
        goes
        """,
        arguments: TestBackend.available)
    func valueADatabaseCannotStore(_ backend: TestBackend) async throws {
        let directory = TemporaryDirectory()
        let server = try await LiveServer.start(backend, tables: ["todo"])
        let store = directory.file("store")
        #expect(try await CLI.run(["-C", store, "init", "--remote", server.baseURL, "--table", "todo"]).status == 0)
        for number in 0..<20 {
            let text = number == 7 ? #"nul \u0000 inside"# : "item \(number)"
            try directory.write(
                "store/tables/todo/r\(number).json", #"{"id": "r\#(number)", "text": "\#(text)"}"# + "\n")
        }
        let push = try await CLI.run(["-C", store, "push", "--json"])
        #expect(push.status == 3, "\(push.stdout) \(push.stderr)")
        let report = try JSONParser.parse(Array(push.stdout.utf8))
        #expect(report["applied"] == 19 && report["rejected"] == ["todo/r7"], "\(push.stdout)")
        #expect(try await Reliability.serverRows(server.baseURL, table: "todo").count == 19)
        let second = try await CLI.run(["-C", store, "push"])
        #expect(second.status == 3, "it waits as a conflict, nothing blocked: \(second.stdout) \(second.stderr)")
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }

    @Test(
        """
        a server that fails every write is away, not failing on a record: the push stops with exit 4 before setting \
        many aside
        """
    )
    func failingServerStopsThePush() async throws {
        let setup = try await Setup(count: 30)
        setup.proxy.inject(.status(500), method: "PUT", times: 1_000)
        setup.proxy.inject(.status(500), method: "POST", times: 1_000)
        let push = try await CLI.run(["-C", setup.store, "push", "--attempts", "1"])
        #expect(push.status == 4, "\(push.stdout) \(push.stderr)")
        let conflicts = try JSONParser.parse(
            Array(try await CLI.run(["-C", setup.store, "conflicts", "--json"]).stdout.utf8))
        #expect(
            (conflicts["conflicts"]?.arrayValue?.count ?? 0) < Pusher.faultsInARowLimit,
            "fewer than the limit in a row are set aside before the push stops: \(conflicts)")
        await setup.stop()
    }

    /// Stands for a user whose token may read every table but write only some (`write=role:editor` on
    /// `announcements`): an edit there is refused with 403 by the real server's access rule.
    @Test(
        """
        an edit the server forbids (403) beside an allowed one: the allowed one is sent, the pull is done, the refused \
        one is set aside with the server's reason (exit 3), and resolve --discard clears it
        """
    )
    func forbiddenEditIsSetAside() async throws {
        let directory = TemporaryDirectory()
        let token = "reader-and-todo-writer"
        let server = try await LiveServer.start(.sqlite, tables: [], tokens: [StaticToken(secret: token)]) {
            $0.tables = [
                TableOptions(name: "todo"),
                TableOptions(name: "announcements", write: .role("editor"))
            ]
        }
        let store = directory.file("store")
        var environment = CLI.environment
        environment["TABLESYNC_TOKEN"] = token
        func tablesync(_ arguments: String...) async throws -> (status: Int32, stdout: String, stderr: String) {
            let run = try await CLI.run(["-C", store] + arguments, environment: environment)
            return (run.status, run.stdout, run.stderr)
        }
        let initialized = try await tablesync(
            "init", "--remote", server.baseURL, "--table", "todo", "--table", "announcements")
        #expect(initialized.status == 0, "\(initialized.stderr)")
        #expect(
            try await tablesync("insert", "announcements", #"{"id": "ann-1", "text": "not mine to post"}"#).status == 0)
        #expect(try await tablesync("insert", "todo", #"{"id": "t1", "text": "mine"}"#).status == 0)

        let sync = try await tablesync("sync")
        #expect(sync.status == 3, "a refusal waits for a person: \(sync.stdout) \(sync.stderr)")
        let rows = try await Reliability.serverContent(server.baseURL, table: "todo", token: token)
        #expect(rows["t1"]?["text"] == "mine", "the allowed insert reached the server")
        let conflicts = try JSONParser.parse(Array(try await tablesync("conflicts", "--json").stdout.utf8))
        let refused = try #require(conflicts["conflicts"]?.arrayValue?.first)
        #expect(refused["status"] == 403, "\(refused)")
        #expect(
            refused["reason"]?.stringValue?.contains("does not allow this user") == true,
            "the server's reason is kept: \(refused)")
        let status = try await tablesync("status", "--json")
        #expect(status.stdout.contains("announcements/ann-1"), "status lists it: \(status.stdout)")

        let discarded = try await tablesync("resolve", "announcements/ann-1", "--discard")
        #expect(discarded.status == 0, "\(discarded.stdout) \(discarded.stderr)")
        let clean = try await tablesync("sync")
        #expect(clean.status == 0, "nothing left to refuse: \(clean.stdout) \(clean.stderr)")
        #expect(FileManager.default.fileExists(atPath: store + "/tables/announcements/ann-1.json") == false)
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }

    /// Stands for a generated record nested deeper than the protocol's envelopes can carry, beside ordinary ones: it
    /// is refused where it is made, and never holds back a batch.
    @Test(
        """
        a record nested deeper than a batch can carry, beside two ordinary ones: insert refuses it, a hand-made file \
        is reported, and the two reach the server in a batch
        """
    )
    func tooDeepRecordNeverBlocksABatch() async throws {
        let directory = TemporaryDirectory()
        let server = try await LiveServer.start(.sqlite, tables: ["todo"])
        let store = directory.file("store")
        #expect(try await CLI.run(["-C", store, "init", "--remote", server.baseURL, "--table", "todo"]).status == 0)
        let deep =
            String(repeating: #"{"a":"#, count: RecordNesting.maximumDepth) + "1"
            + String(repeating: "}", count: RecordNesting.maximumDepth)
        let refused = try await CLI.run(["-C", store, "insert", "todo", #"{"id": "deep", "x": "# + deep + "}"])
        #expect(refused.status == 2, "refused before it is queued: \(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("levels deep"), "\(refused.stderr)")
        try directory.write("store/tables/todo/deep.json", #"{"id": "deep", "x": "# + deep + "}\n")
        for id in ["one", "two"] { try directory.write("store/tables/todo/\(id).json", #"{"id": "\#(id)"}"# + "\n") }
        let push = try await CLI.run(["-C", store, "push", "--json"])
        #expect(push.status == 7, "the deep file is reported, the rest went: \(push.stdout) \(push.stderr)")
        let report = try JSONParser.parse(Array(push.stdout.utf8))
        #expect(report["applied"] == 2 && report["batched"] == true, "\(report)")
        #expect(push.stdout.contains("deep.json"), "\(push.stdout)")
        let rows = try await Reliability.serverContent(server.baseURL, table: "todo")
        #expect(Set(rows.keys) == ["one", "two"])
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }
}
