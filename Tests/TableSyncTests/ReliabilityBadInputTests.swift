import Foundation
import SyncProtocol
import TableSyncStorage
import Testing
import TestSupport
@testable import TableSync

/// Broken record files and hostile server answers: a clear error naming the file or the server, nothing written
/// outside the store, nothing lost.
@Suite("Reliability: bad input", .serialized) struct ReliabilityBadInputTests {
    /// A broken file by hand, with the name it is saved under.
    struct BrokenFile: Sendable, CustomStringConvertible {
        var name: String
        var bytes: [UInt8]
        /// What a person sees in the report: part of the reason.
        var description: String { name }
    }

    static let brokenFiles: [BrokenFile] = [
        BrokenFile(name: "invalid.json", bytes: Array("{\"id\": \"invalid\", \"text\": }\n".utf8)),
        BrokenFile(
            name: "conflicted.json",
            bytes: Array(
                """
                {
                <<<<<<< HEAD
                  "id": "conflicted", "text": "mine"
                =======
                  "id": "conflicted", "text": "theirs"
                >>>>>>> other
                }

                """.utf8)),
        BrokenFile(
            name: "mismatch.json",
            bytes: Array(#"{"id": "other", "text": "saved under the wrong name"}"#.utf8) + [UInt8(ascii: "\n")]),
        BrokenFile(
            name: "notutf8.json",
            bytes: Array("{\"id\": \"notutf8\", \"text\": \"".utf8) + [0xFF, 0xFE, 0xC3] + Array("\"}\n".utf8)),
        BrokenFile(name: "array.json", bytes: Array("[1, 2, 3]\n".utf8)),
        BrokenFile(name: "empty.json", bytes: []),
        BrokenFile(name: "badid.json", bytes: Array("{\"id\": 5}\n".utf8)),
        // `^a.json` is the name of id `A`; `A.json` is a case variant no id maps to.
        BrokenFile(name: "A.json", bytes: Array("{\"id\": \"A\", \"text\": \"case variant\"}\n".utf8))
    ]

    @Test(
        "a broken record file is reported with its path and skipped; the others are pushed; fixed, it is pushed too",
        arguments: brokenFiles)
    func brokenRecordFile(_ broken: BrokenFile) async throws {
        let table = uniqueTableName("bad")
        let server = try await LiveServer.start(.sqlite, tables: [table])
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        #expect(try await CLI.run(["-C", store, "init", "--remote", server.baseURL, "--table", table]).status == 0)
        let tableDirectory = store + "/tables/" + table
        try Data("{\"id\": \"good\", \"text\": \"fine\"}\n".utf8).write(
            to: URL(fileURLWithPath: tableDirectory + "/good.json"))
        try Data("{\"id\": \"A\", \"text\": \"the real A\"}\n".utf8).write(
            to: URL(fileURLWithPath: tableDirectory + "/^a.json"))
        try Data(broken.bytes).write(to: URL(fileURLWithPath: tableDirectory + "/" + broken.name))

        let status = try await CLI.run(["-C", store, "status"])
        #expect(
            (status.stdout + status.stderr).contains(broken.name),
            "status names the file: \(status.stdout) \(status.stderr)")
        let synced = try await CLI.run(["-C", store, "sync"])
        #expect(synced.status == 7, "broken files make the run exit 7: \(synced.stdout) \(synced.stderr)")
        #expect((synced.stdout + synced.stderr).contains(broken.name), "sync names the file")
        #expect(
            FileManager.default.contents(atPath: tableDirectory + "/" + broken.name).map(Array.init) == broken.bytes,
            "the broken file is left as it was")
        var rows = try await Reliability.serverContent(server.baseURL, table: table)
        #expect(rows["good"]?["text"] == "fine", "the other files were pushed")
        #expect(rows["A"]?["text"] == "the real A")
        #expect(rows.count == 2, "nothing from the broken file reached the server: \(rows.keys.sorted())")
        let verified = try await CLI.run(["-C", store, "verify"])
        #expect(verified.status == 7 && (verified.stdout + verified.stderr).contains(broken.name))

        // Fixed by hand, the file goes out with the next sync.
        try FileManager.default.removeItem(atPath: tableDirectory + "/" + broken.name)
        try Data("{\"id\": \"fixed\", \"text\": \"repaired\"}\n".utf8).write(
            to: URL(fileURLWithPath: tableDirectory + "/fixed.json"))
        let again = try await CLI.run(["-C", store, "sync"])
        #expect(again.status == 0, "\(again.stdout) \(again.stderr)")
        rows = try await Reliability.serverContent(server.baseURL, table: table)
        #expect(rows["fixed"]?["text"] == "repaired")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["store"],
            "nothing written outside the store")
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }

    /// Valid JSON in forms people's editors produce (Windows editors write CRLF line ends, and Notepad a UTF-8 byte
    /// order mark, which JSON lets a reader ignore), and a big record: accepted, not refused.
    static let acceptedFiles: [BrokenFile] = [
        BrokenFile(
            name: "crlf.json", bytes: Array("{\r\n  \"id\": \"crlf\",\r\n  \"text\": \"windows\"\r\n}\r\n".utf8)),
        BrokenFile(
            name: "bom.json", bytes: [0xEF, 0xBB, 0xBF] + Array("{\"id\": \"bom\", \"text\": \"notepad\"}\n".utf8)),
        BrokenFile(
            name: "big.json",
            bytes: Array("{\"id\": \"big\", \"text\": \"\(String(repeating: "0123456789", count: 1_000_000))\"}\n".utf8)
        )
    ]

    @Test(
        """
        CRLF line ends, a byte order mark and a 10 MB record are valid records: pushed, rewritten canonically, pulled \
        back equal
        """,
        arguments: acceptedFiles)
    func acceptedRecordFile(_ file: BrokenFile) async throws {
        let table = uniqueTableName("odd")
        let server = try await LiveServer.start(.sqlite, tables: [table])
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        #expect(try await CLI.run(["-C", store, "init", "--remote", server.baseURL, "--table", table]).status == 0)
        try Data(file.bytes).write(to: URL(fileURLWithPath: store + "/tables/" + table + "/" + file.name))
        let synced = try await CLI.run(["-C", store, "sync"])
        #expect(synced.status == 0, "\(synced.stdout) \(synced.stderr)")
        let id = String(file.name.dropLast(5))
        let expected = try JSONParser.parse(RecordFile.jsonText(file.bytes).text)["text"]
        #expect(try await Reliability.serverContent(server.baseURL, table: table)[id]?["text"] == expected)
        let written = Array(
            try #require(FileManager.default.contents(atPath: store + "/tables/" + table + "/" + file.name)))
        #expect(
            written.first == UInt8(ascii: "{") && !written.contains(UInt8(ascii: "\r")),
            "the push wrote the server's copy back in the canonical form: no byte order mark, no CR")
        let other = directory.file("other")
        #expect(try await CLI.run(["-C", other, "init", "--remote", server.baseURL, "--table", table]).status == 0)
        #expect(try await CLI.run(["-C", other, "pull", table]).status == 0)
        let pulled = try JSONParser.parse(
            Array(try #require(FileManager.default.contents(atPath: other + "/tables/" + table + "/" + file.name))))
        #expect(pulled["text"] == expected)
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }

    /// A page from a hostile server, and what the client must do with it.
    struct HostilePage: Sendable, CustomStringConvertible {
        var description: String
        var body: String
        /// `true` when the answer is a page whose one record the store cannot hold but can page past (it has a
        /// string id and an `updatedAt`): the record is skipped and reported, the watermark moves past it.
        /// Otherwise the page as a whole is refused and nothing moves.
        var recordSkipped: Bool {
            guard case .object(let page)? = try? JSONParser.parse(Array(body.utf8)),
                case .object(let record)? = page["items"]?.arrayValue?.first
            else { return false }
            return record["id"]?.stringValue != nil
                && record["updatedAt"]?.stringValue.flatMap(Timestamp.init(parsing:)) != nil
        }
    }

    static let item =
        #""createdAt":"2024-01-01T00:00:00.000Z","updatedAt":"2024-01-01T00:00:00.000Z","#
        + #""version":"AQ==","deleted":false"#
    static let hostilePages: [HostilePage] = [
        HostilePage(description: "id ../../x", body: #"{"items":[{"id":"../../x",\#(item)}]}"#),
        HostilePage(description: "id ..", body: #"{"items":[{"id":"..",\#(item)}]}"#),
        HostilePage(description: "id .", body: #"{"items":[{"id":".",\#(item)}]}"#),
        HostilePage(description: "id with /", body: #"{"items":[{"id":"a/b",\#(item)}]}"#),
        HostilePage(description: "id with a backslash", body: #"{"items":[{"id":"a\\..\\b",\#(item)}]}"#),
        HostilePage(description: "id with a control character", body: #"{"items":[{"id":"a\u0001b",\#(item)}]}"#),
        HostilePage(description: "id with a newline", body: #"{"items":[{"id":"a\nb",\#(item)}]}"#),
        HostilePage(
            description: "id too long", body: #"{"items":[{"id":"\#(String(repeating: "a", count: 300))",\#(item)}]}"#),
        HostilePage(description: "id empty", body: #"{"items":[{"id":"",\#(item)}]}"#),
        HostilePage(description: "no id", body: #"{"items":[{\#(item)}]}"#),
        HostilePage(description: "numeric id", body: #"{"items":[{"id":7,\#(item)}]}"#),
        HostilePage(description: "no updatedAt", body: #"{"items":[{"id":"a","version":"AQ==","deleted":false}]}"#),
        HostilePage(
            description: "updatedAt not a date",
            body: #"{"items":[{"id":"a","updatedAt":"yesterday","version":"AQ=="}]}"#),
        HostilePage(description: "updatedAt a number", body: #"{"items":[{"id":"a","updatedAt":5,"version":"AQ=="}]}"#),
        HostilePage(
            description: "deleted a string",
            body: #"{"items":[{"id":"a","updatedAt":"2024-01-01T00:00:00.000Z","deleted":"yes"}]}"#),
        HostilePage(
            description: "version a number",
            body: #"{"items":[{"id":"a","updatedAt":"2024-01-01T00:00:00.000Z","version":1}]}"#),
        HostilePage(
            description: "version with a newline",
            body: #"{"items":[{"id":"a","updatedAt":"2024-01-01T00:00:00.000Z","version":"A\r\nX-Evil: 1"}]}"#),
        HostilePage(
            description: "version with DEL",
            body: #"{"items":[{"id":"a","updatedAt":"2024-01-01T00:00:00.000Z","version":"AQ\u007F"}]}"#),
        HostilePage(
            description: "version with a C1 control after é",
            body: #"{"items":[{"id":"a","updatedAt":"2024-01-01T00:00:00.000Z","version":"é\u0085"}]}"#),
        HostilePage(description: "item not an object", body: #"{"items":["a"]}"#),
        HostilePage(description: "items not an array", body: #"{"items":{"id":"a"}}"#),
        HostilePage(description: "invalid JSON", body: #"{"items":[{"id":"a","#),
        HostilePage(description: "a string", body: #""hello""#),
        HostilePage(
            description: "deeply nested",
            body: String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000))
    ]

    @Test(
        """
        a hostile page is refused, or its record skipped, with a clear error; nothing is written, inside the store or \
        outside
        """,
        arguments: hostilePages)
    func hostilePage(_ page: HostilePage) async throws {
        let hostile = try HostileServer { request in
            request.method == "GET" ? .json(page.body) : .json(#"{"error":"no"}"#, status: 400)
        }
        let directory = TemporaryDirectory()
        let store = directory.file("deep/store")
        #expect(try await CLI.run(["-C", store, "init", "--remote", hostile.baseURL, "--table", "todo"]).status == 0)
        let keep: [UInt8] = Array("{\"id\":\"keep\",\"text\":\"local\"}\n".utf8)
        try Data(keep).write(to: URL(fileURLWithPath: store + "/tables/todo/keep.json"))
        let before = try Self.tree(directory.path)
        let pulled = try await CLI.run(["-C", store, "pull", "todo", "--query-id", "all", "--attempts", "1"])
        if page.recordSkipped {
            // keep.json, pushed first and refused by this server, waits as a conflict: exit 3 outranks 8.
            #expect(pulled.status == 3, "\(page): exit \(pulled.status): \(pulled.stderr)")
            #expect(pulled.stdout.contains("1 server record(s) skipped"), "\(page): reported: \(pulled.stdout)")
        } else {
            #expect(pulled.status == 4, "\(page): exit \(pulled.status): \(pulled.stderr)")
            #expect(pulled.stderr.contains("not valid"), "\(page): a clear error: \(pulled.stderr)")
            #expect(pulled.stderr.split(separator: "\n").count == 1, "one sentence")
        }
        let after = try Self.tree(directory.path)
        // The pull pushes keep.json first, and this server refuses it: a conflict file is expected, inside the store.
        #expect(
            after.subtracting(before).filter { !$0.hasPrefix("deep/store/") || $0.hasPrefix("deep/store/tables/") }
                .isEmpty,
            "\(page): new files \(after.subtracting(before).sorted())")
        #expect(FileManager.default.contents(atPath: store + "/tables/todo/keep.json").map(Array.init) == keep)
        let queries = try String(contentsOfFile: store + "/queries.json", encoding: .utf8)
        if page.recordSkipped {
            #expect(
                queries.contains("2024-01-01") && queries.contains("skipped"),
                "the watermark moved past the skipped record, which is kept for status")
        } else {
            #expect(!queries.contains("2024-01-01"), "the watermark did not move past a refused page")
        }
        hostile.stop()
    }

    /// Runs `tablesync pull todo` (pages of 3, one attempt) for at most 30 s, killing it if it still runs: a bound,
    /// not a timing assertion — a correct client stops after two pages, a looping one never does.
    static func boundedPull(store: String) async throws -> (looping: Bool, status: Int32) {
        let process = try CLI.start([
            "-C", store, "pull", "todo", "--query-id", "all", "--page-size", "3", "--attempts", "1"
        ])
        var waited = 0
        while process.isRunning && waited < 600 {
            try await Task.sleep(nanoseconds: 50_000_000)
            waited += 1
        }
        let looping = process.isRunning
        if looping { kill(process.processIdentifier, SIGKILL) }
        return (looping, await CLI.wait(process).status)
    }

    @Test("a server that answers the same full page for ever stops the pull instead of looping")
    func samePageForever() async throws {
        let page =
            "{\"items\":[" + (0..<3).map { #"{"id":"p\#($0)",\#(Self.item)}"# }.joined(separator: ",")
            + "],\"nextLink\":\"/tables/todo?x\"}"
        let hostile = try HostileServer { _ in .json(page) }
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        #expect(try await CLI.run(["-C", store, "init", "--remote", hostile.baseURL, "--table", "todo"]).status == 0)
        let (looping, status) = try await Self.boundedPull(store: store)
        #expect(
            !looping, "the pull loops for ever on a page that does not advance (\(hostile.requests.count) requests)")
        #expect(status != 0)
        hostile.stop()
    }

    @Test("a server without extensions that ignores $skip stops the ge + $skip pull on the first repeated page")
    func serverIgnoringSkip() async throws {
        // Every record shares one updatedAt, so the SDK paging asks for the next page with a growing $skip only.
        let page =
            "{\"items\":[" + (0..<3).map { #"{"id":"k\#($0)",\#(Self.item)}"# }.joined(separator: ",")
            + "],\"nextLink\":\"/tables/todo?x\"}"
        let hostile = try HostileServer { request in
            request.method == "GET"
                ? .json(page, extensions: false) : .json(#"{"error":"no"}"#, status: 400, extensions: false)
        }
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        #expect(try await CLI.run(["-C", store, "init", "--remote", hostile.baseURL, "--table", "todo"]).status == 0)
        let (looping, status) = try await Self.boundedPull(store: store)
        #expect(!looping, "the pull loops for ever on a server that ignores $skip (\(hostile.requests.count) requests)")
        #expect(status == 4)
        // Pages ask in order; the store's first contact also reads one record to learn the protocol version.
        let pages = hostile.requests.filter {
            $0.method == "GET" && $0.target.hasPrefix("/tables/todo") && $0.target.contains("orderby")
        }
        #expect(pages.count == 2, "the first page and its repeat: \(pages.map(\.target))")
        #expect(
            pages.last?.target.contains("skip=3") == true, "the SDK paging asked for the rows after the first three")
        let pulled = try await CLI.run([
            "-C", store, "pull", "todo", "--query-id", "all", "--page-size", "3", "--attempts", "1"
        ])
        #expect(pulled.status == 4)
        #expect(
            pulled.stderr.contains("ignores $skip") && pulled.stderr.contains(hostile.baseURL + "/tables/todo"),
            "a clear error: \(pulled.stderr)")
        // The first page was a real answer: it is in the store, and the store is sound.
        #expect(FileManager.default.fileExists(atPath: store + "/tables/todo/k0.json"))
        #expect(try await CLI.run(["-C", store, "verify"]).status == 0)
        hostile.stop()
    }

    @Test("a keyset cursor moves forward, or the pull stops")
    func cursorMustAdvance() {
        let early = PullWatermark(updatedAt: "2024-01-01T00:00:00.000Z", lastID: "b")
        #expect(PullPlan.advances(from: nil, to: early))
        #expect(PullPlan.advances(from: early, to: PullWatermark(updatedAt: "2024-01-01T00:00:00.000Z", lastID: "c")))
        #expect(
            PullPlan.advances(from: early, to: PullWatermark(updatedAt: "2024-01-01T00:00:00.0000001Z", lastID: "a")))
        #expect(!PullPlan.advances(from: early, to: early), "the same page again")
        #expect(
            !PullPlan.advances(from: early, to: PullWatermark(updatedAt: "2023-12-31T23:59:59.999Z", lastID: "z")),
            "an older page")
        #expect(!PullPlan.advances(from: early, to: nil))
    }

    @Test("a huge page is taken in one go")
    func hugePage() async throws {
        let count = 5_000
        let page =
            "{\"items\":["
            + (0..<count).map { index in
                #"{"id":"h\#(index)","text":"\#(index)","createdAt":"2024-01-01T00:00:00.000Z","#
                    + #""updatedAt":"2024-01-01T00:00:01.\#(String(format: "%04d", index))Z","version":"AQ==","#
                    + #""deleted":false}"#
            }.joined(separator: ",") + "]}"
        let hostile = try HostileServer { request in
            request.target.contains("updatedAt%20gt") || request.target.contains("updatedAt gt")
                ? .json("{\"items\":[]}") : .json(page)
        }
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        #expect(try await CLI.run(["-C", store, "init", "--remote", hostile.baseURL, "--table", "todo"]).status == 0)
        let pulled = try await CLI.run([
            "-C", store, "pull", "todo", "--query-id", "all", "--page-size", "10", "--attempts", "1"
        ])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store + "/tables/todo").count == count)
        hostile.stop()
    }

    /// Every path under `root`, relative.
    static func tree(_ root: String) throws -> Set<String> {
        Set(FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? [])
    }
}
