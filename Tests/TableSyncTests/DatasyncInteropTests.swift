import Foundation
import SyncProtocol
import Testing
import TableSyncStorage
import TestSupport

@testable import TableSync

/// `tablesync` against a CommunityToolkit Datasync server (``DatasyncStandIn`` answers as its ASP.NET Core
/// `TableController` does), driven as a person drives it: `init`, record files written and removed by hand, `sync`,
/// `resolve`, `pull`, `watch`. Each test names the Datasync behaviour it stands for.
@Suite("Interop with a Datasync server")
struct DatasyncInteropTests {
    /// Stands for a first sync against Datasync and a second one after hand edits: the second pull asks for what
    /// changed since the first (`updatedAt ge …`), which Datasync's OData v4 parser refused with 400 while the client
    /// wrote the date `datetimeoffset'…'`; every operation goes as a request of its own (no `/batch`).
    @Test("creates, updates and deletes go one request each, and both stores end with the server's records exactly")
    func syncRoundTrip() async throws {
        let datasync = try await DatasyncStandIn.start(tables: ["todo"])
        let stores = DatasyncStores(datasync)
        await datasync.seed((1...3).map { ["id": .string("s\($0)"), "text": "from another client"] }, table: "todo")
        try await stores.initialize("a")
        for number in 1...5 { try stores.write("a", ["id": .string("r\(number)"), "text": "written by hand"]) }
        try await stores.run("a", "sync")
        #expect(try stores.ids("a") == ["r1", "r2", "r3", "r4", "r5", "s1", "s2", "s3"])

        try stores.edit("a", "r1", text: "edited")
        try stores.edit("a", "r2", text: "edited")
        try stores.remove("a", "r3")
        try await stores.run("a", "sync")

        let requests = await datasync.requests()
        #expect(requests.filter { $0.hasPrefix("POST /tables/todo ") }.count == 5, "\(requests)")
        #expect(requests.filter { $0.hasPrefix("PUT /tables/todo/") }.count == 2, "\(requests)")
        #expect(requests.filter { $0.hasPrefix("DELETE /tables/todo/r3 ") } == ["DELETE /tables/todo/r3 204"])
        #expect(!requests.contains { $0.split(separator: " ").last?.first == "4" }, "no request refused: \(requests)")
        #expect(await datasync.record("r3", table: "todo")?["deleted"] == true)
        #expect(await datasync.record("r1", table: "todo")?["text"] == "edited")

        try await stores.initialize("b")
        try await stores.run("b", "sync")
        let live = ["r1", "r2", "r4", "r5", "s1", "s2", "s3"]
        #expect(try stores.ids("a") == live)
        #expect(try stores.ids("b") == live)
        for id in live {
            let server = await datasync.record(id, table: "todo")
            #expect(try stores.record("b", id)?["version"] == server?["version"], "\(id)")
            #expect(try stores.record("a", id)?["version"] == server?["version"], "\(id)")
        }
        #expect(try await stores.run("a", "status").stdout.contains("Nothing to push"))
        await datasync.stop()
    }

    /// Stands for two people editing the same records against Datasync: a replace on a stale version is answered 412
    /// with the server's entity (`ParseConditionalRequest`), an insert of an id the server holds 409 with the stored
    /// entity (`InMemoryRepository.CreateAsync`); each is resolved both ways.
    @Test("a 412 update and a 409 insert become conflicts; keep-local and take-server each settle one of both")
    func conflictsResolvedBothWays() async throws {
        let datasync = try await DatasyncStandIn.start(tables: ["todo"])
        let stores = DatasyncStores(datasync)
        await datasync.seed(["u1", "u2"].map { ["id": .string($0), "text": "first"] }, table: "todo")
        try await stores.initialize("a")
        try await stores.run("a", "sync")
        try await stores.initialize("b")
        try await stores.run("b", "sync")
        try stores.edit("b", "u1", text: "b's words")
        try stores.edit("b", "u2", text: "b's words")
        try await stores.run("b", "sync")
        // Another client inserts records with ids that a is about to insert too.
        await datasync.seed(["d1", "d2"].map { ["id": .string($0), "text": "the server's"] }, table: "todo")

        try stores.edit("a", "u1", text: "a's words")
        try stores.edit("a", "u2", text: "a's words")
        for id in ["d1", "d2"] { try stores.write("a", ["id": .string(id), "text": "a's insert"]) }
        let refused = try await stores.run("a", "sync", expecting: 3)
        #expect((refused.stdout + refused.stderr).contains("onflict"), "\(refused.stdout) \(refused.stderr)")
        let requests = await datasync.requests()
        #expect(requests.contains("PUT /tables/todo/u1 412") && requests.contains("POST /tables/todo 409"))
        let listed = try await stores.run("a", "conflicts", expecting: 3)
        for id in ["u1", "u2", "d1", "d2"] { #expect(listed.stdout.contains("todo/\(id)"), "\(listed.stdout)") }

        try await stores.run("a", "resolve", "todo/u1", "--keep-local")
        try await stores.run("a", "resolve", "todo/u2", "--take-server")
        try await stores.run("a", "resolve", "todo/d1", "--keep-local")
        try await stores.run("a", "resolve", "todo/d2", "--take-server")
        try await stores.run("a", "sync")

        let expected = ["u1": "a's words", "u2": "b's words", "d1": "a's insert", "d2": "the server's"]
        for (id, text) in expected {
            #expect(await datasync.record(id, table: "todo")?["text"]?.stringValue == text, "server \(id)")
            #expect(try stores.record("a", id)?["text"]?.stringValue == text, "a's \(id)")
        }
        try await stores.run("b", "sync")
        for (id, text) in expected { #expect(try stores.record("b", id)?["text"]?.stringValue == text, "b's \(id)") }
        #expect(!FileManager.default.fileExists(atPath: stores.directory.file("a/conflicts/todo/u1.json")))
        await datasync.stop()
    }

    /// Stands for `tablesync watch` on a store of a Datasync server, which offers no change feed (`/health` is a
    /// 404): the watch polls, pulls an insert and then an update made by another client (a pull from a watermark),
    /// and pushes a record file written by hand.
    @Test("watch polls a Datasync server: a remote insert and a remote update arrive, a hand-written file goes out")
    func watchPolls() async throws {
        let datasync = try await DatasyncStandIn.start(tables: ["todo"])
        let world = try await WatchWorld(stores: ["a"], records: 0, remote: datasync.baseURL)
        let a = try world.watch("a", "--poll-interval", "1")
        try await a.waitForStart()
        #expect(a.events().first?["changeFeed"] == false)
        let other = DatasyncStores(datasync)
        #expect(try await other.serverWrite("POST", "/tables/todo", ["id": "s1", "text": "from the server"]) == 201)
        try await world.waitUntil("the server's insert was pulled") { try world.text("a", "s1") == "from the server" }
        let version = try #require(await datasync.record("s1", table: "todo")?["version"]?.stringValue)
        let replaced = try await other.serverWrite(
            "PUT", "/tables/todo/s1", ["id": "s1", "text": "changed on the server"], ifMatch: version)
        #expect(replaced == 200)
        try await world.waitUntil("the server's update was pulled") {
            try world.text("a", "s1") == "changed on the server"
        }
        try world.directory.write("a/tables/todo/h1.json", #"{"id": "h1", "text": "by hand"}"#)
        try await world.waitUntil("the hand-written file reached the server") {
            await datasync.record("h1", table: "todo")?["text"] == "by hand"
        }
        #expect(try await a.stop() == 0)
        #expect(!(await datasync.requests()).contains { $0.contains(" 400") }, "no request refused")
        await datasync.stop()
    }

    /// Stands for a table whose 5,000 rows were written in one statement (one `UpdatedAt` for all), read through
    /// Datasync's 100-record pages: the SDK paging (`updatedAt ge T`, `$skip`) must walk past rows sharing the
    /// watermark's instant, in Datasync's order (`updatedAt`, then `id`), without skipping or repeating one.
    @Test("5,000 records sharing one updatedAt are pulled whole in 100-record pages, none skipped or repeated")
    func sharedTimestampPull() async throws {
        let datasync = try await DatasyncStandIn.start(tables: ["todo"])
        let stores = DatasyncStores(datasync)
        let ids = (0..<5000).map { String(format: "id-%04d", $0) }
        await datasync.seed(
            ids.shuffled().map { ["id": .string($0), "text": "bulk"] }, table: "todo", updatedAt: Date())
        try await stores.initialize("a")

        let pulled = try await stores.run("a", "pull", "todo", "--query-id", "all", "--json")
        let report = try JSONParser.parse(Array(pulled.stdout.utf8))
        #expect(report["written"] == 5000, "every record written once: \(pulled.stdout)")
        #expect(report["unchanged"] == 0, "none came twice")
        #expect(try stores.ids("a") == ids)
        let pages = await datasync.requests().filter { $0.hasPrefix("GET /tables/todo?") && $0.contains("$orderby") }
        #expect(pages.count == 50, "one request per 100-record page: \(pages.count)")
        #expect(pages.allSatisfy { $0.hasSuffix(" 200") })
        await datasync.stop()
    }

    /// Stands for Datasync's `nextLink`, the next page's query string alone (`CreateNextLink` in
    /// `TableController.Query.cs`): a client that took it for a URL asked `/tables/todo?/tables/…` or lost the
    /// table's path. The pull reads on while a page carries one, each request on the table's own path.
    @Test("a pull over many pages follows Datasync's query-string-only nextLink to the end")
    func pullFollowsNextLink() async throws {
        let datasync = try await DatasyncStandIn.start(tables: ["todo"])
        let stores = DatasyncStores(datasync)
        // Five batches of 50 records, each sharing its own instant a millisecond after the one before, a minute ago.
        let start = Date().addingTimeInterval(-60)
        for batch in 0..<5 {
            await datasync.seed(
                (0..<50).map { ["id": .string("b\(batch)-\($0)"), "text": "x"] }, table: "todo",
                updatedAt: start.addingTimeInterval(Double(batch) / 1000))
        }
        // What Datasync sends for the client's first page: the query string alone.
        let first = try await stores.serverRead("/tables/todo", query: [("$orderby", "updatedAt"), ("$top", "1000")])
        let link = try #require(first["nextLink"]?.stringValue)
        #expect(!link.hasPrefix("/") && !link.hasPrefix("http") && !link.hasPrefix("?"), "\(link)")
        #expect(link.hasSuffix("$skip=100&$top=900"), "\(link)")

        try await stores.initialize("a")
        let pulled = try await stores.run("a", "pull", "todo", "--query-id", "all", "--json")
        #expect(try JSONParser.parse(Array(pulled.stdout.utf8))["written"] == 250, "\(pulled.stdout)")
        #expect(try stores.ids("a").count == 250)
        let lists = await datasync.requests().filter { $0.hasPrefix("GET /tables/todo?") && $0.contains("$orderby") }
        #expect(lists.count >= 3, "\(lists)")
        #expect(lists.allSatisfy { $0.split(separator: "?").count == 2 && $0.hasSuffix(" 200") }, "\(lists)")

        // More records, later: the next pull starts from the watermark and brings only them.
        await datasync.seed((0..<120).map { ["id": .string("late-\($0)"), "text": "x"] }, table: "todo")
        let again = try await stores.run("a", "pull", "todo", "--query-id", "all", "--json")
        #expect(try JSONParser.parse(Array(again.stdout.utf8))["written"] == 120, "\(again.stdout)")
        #expect(try stores.ids("a").count == 370)
        await datasync.stop()
    }

    /// Stands for Datasync reading no `ZUMO-API-VERSION` at all: a store made without `--api-version` learns 3 at
    /// its first contact (its first read in 3.0.0 is answered), and Datasync's answers do not depend on the header.
    @Test("a store that pins no protocol version speaks 3 to Datasync, which answers any version header alike")
    func learnsVersion3() async throws {
        let datasync = try await DatasyncStandIn.start(tables: ["todo"])
        let stores = DatasyncStores(datasync)
        await datasync.seed([["id": "s1", "text": "x"]], table: "todo")
        var answers: [Int] = []
        for version in [nil, "2.0.0", "3.0.0"] {
            let http = ServerHTTPClient(
                baseURL: datasync.baseURL, defaultHeaders: version.map { [ProtocolHeader.apiVersion: $0] } ?? [:],
                retryPolicy: .none)
            answers.append(try await http.send(HTTPRequest(method: "GET", path: "/tables/todo")).status)
        }
        #expect(answers == [200, 200, 200])
        try await stores.initialize("a")
        try await stores.run("a", "sync")
        let layout = StoreLayout(root: stores.directory.file("a"))
        #expect(LearnedProtocolVersion.load(layout: layout, remote: datasync.baseURL) == 3)
        await datasync.stop()
    }

    /// Stands for Datasync's own query tests (`Service/Query_Tests.cs`: `SoftDeleteQueryTest_002` and `_005`,
    /// `Paging_Test_4`, `Query_Test_067`, `FailedQueryTest`), replayed against the stand-in over 248 records, 95 of
    /// them deleted, so that the client tests above meet the pages, counts, links and refusals Datasync gives.
    @Test("the stand-in answers Datasync's own query tests as Datasync does")
    func standInAgreesWithDatasyncsQueryTests() async throws {
        let datasync = try await DatasyncStandIn.start(tables: ["movies"])
        let stores = DatasyncStores(datasync)
        let ids = (0..<248).map { String(format: "id-%03d", $0) }
        await datasync.seed(ids.map { ["id": .string($0), "title": "a movie"] }, table: "movies")
        // 95 of them deleted, as SoftDeleteQueryTest_005 deletes the R-rated ones.
        for id in ids.prefix(95) {
            let version = try #require(await datasync.record(id, table: "movies")?["version"]?.stringValue)
            let http = ServerHTTPClient(baseURL: datasync.baseURL, defaultHeaders: [:], retryPolicy: .none)
            let deleted = try await http.send(
                HTTPRequest(method: "DELETE", path: "/tables/movies/" + id, headers: ["If-Match": "\"\(version)\""]))
            #expect(deleted.status == 204)
        }
        let cases: [(query: [(name: String, value: String)], items: Int, count: Int?, nextLink: String?)] = [
            ([("$count", "true")], 100, 153, "$count=true&$skip=100"),
            ([("$top", "50"), ("$count", "true")], 50, 153, nil),
            ([("$top", "125")], 100, nil, "$skip=100&$top=25"),
            ([("$skip", "100"), ("$top", "25")], 25, nil, nil),
            ([("__includedeleted", "true")], 100, nil, "__includedeleted=true&$skip=100"),
            ([("__includedeleted", "true"), ("$skip", "200")], 48, nil, nil)
        ]
        for row in cases {
            let page = try await stores.serverRead("/tables/movies", query: row.query)
            #expect(page["items"]?.arrayValue?.count == row.items, "\(row.query)")
            #expect(page["count"]?.integerValue.map { Int($0) } == row.count, "\(row.query)")
            #expect(page["nextLink"]?.stringValue == row.nextLink, "\(row.query)")
        }
        let http = ServerHTTPClient(baseURL: datasync.baseURL, defaultHeaders: [:], retryPolicy: .none)
        for query in ["$skip=-1", "$skip=NaN", "$top=-1", "$top=1000000", "$top=NaN"] {
            let refused = try await http.send(HTTPRequest(method: "GET", path: "/tables/movies?" + query))
            #expect(refused.status == 400, "\(query)")
        }
        let deletedRead = try await http.send(HTTPRequest(method: "GET", path: "/tables/movies/id-000"))
        #expect(deletedRead.status == 410)
        await datasync.stop()
    }
}

/// Stores under one temporary directory on a ``DatasyncStandIn``, driven with the `tablesync` command line.
struct DatasyncStores {
    let datasync: DatasyncStandIn
    let directory = TemporaryDirectory()

    init(_ datasync: DatasyncStandIn) { self.datasync = datasync }

    /// `tablesync init` of store `name` on the stand-in with table `todo`, no protocol version pinned.
    func initialize(_ name: String) async throws {
        try await run(name, "init", "--remote", datasync.baseURL, "--table", "todo")
    }

    /// Runs `tablesync -C <store> arguments`, expecting exit status `expecting`.
    @discardableResult
    func run(
        _ name: String, _ arguments: String..., expecting: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (status: Int32, stdout: String, stderr: String, killed: Bool) {
        let run = try await CLI.run(["-C", directory.file(name)] + arguments)
        #expect(
            run.status == expecting, "\(arguments): \(run.stdout) \(run.stderr)", sourceLocation: sourceLocation)
        return run
    }

    /// Writes record file `record` into store `name`, as an editor would.
    func write(_ name: String, _ record: [String: JSONValue]) throws {
        let id = record["id"]?.stringValue ?? ""
        try directory.write("\(name)/tables/todo/\(id).json", CanonicalJSON.string(.object(record)))
    }

    /// Changes record `id`'s text in store `name` by hand.
    func edit(_ name: String, _ id: String, text: String) throws {
        var changed = try #require(try record(name, id))
        changed["text"] = .string(text)
        try write(name, changed)
    }

    /// Removes record `id`'s file from store `name`, as `rm` would.
    func remove(_ name: String, _ id: String) throws {
        try FileManager.default.removeItem(atPath: directory.file("\(name)/tables/todo/\(id).json"))
    }

    /// Record `id` as store `name`'s file holds it, or `nil` when there is no such file.
    func record(_ name: String, _ id: String) throws -> [String: JSONValue]? {
        guard let bytes = FileManager.default.contents(atPath: directory.file("\(name)/tables/todo/\(id).json")) else {
            return nil
        }
        return try JSONParser.parse(Array(bytes)).objectValue
    }

    /// The ids of store `name`'s record files, sorted.
    func ids(_ name: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.file("\(name)/tables/todo"))
            .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// Sends a write as another Datasync client does, with `If-Match` on `ifMatch`; returns the status.
    func serverWrite(
        _ method: String, _ path: String, _ body: JSONValue, ifMatch: String? = nil
    ) async throws -> Int {
        let http = ServerHTTPClient(
            baseURL: datasync.baseURL, defaultHeaders: [ProtocolHeader.apiVersion: "3.0.0"], retryPolicy: .none)
        let headers = ifMatch.map { ["If-Match": "\"\($0)\""] } ?? [:]
        return try await http.send(
            HTTPRequest(
                method: method, path: path, headers: headers, body: CanonicalJSON.encode(body, style: .compact))
        ).status
    }

    /// A list answer of the stand-in, as JSON.
    func serverRead(_ path: String, query: [(name: String, value: String)]) async throws -> JSONValue {
        let http = ServerHTTPClient(
            baseURL: datasync.baseURL, defaultHeaders: [ProtocolHeader.apiVersion: "3.0.0"], retryPolicy: .none)
        return try JSONParser.parse(try await http.send(HTTPRequest(method: "GET", path: path, query: query)).body)
    }
}
