import Foundation
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// Credentials, listen addresses, query-option injection and path traversal.
@Suite("Reliability: security", .serialized) struct ReliabilitySecurityTests {
    static let token = "tok-\(UUID().uuidString)"

    static let routes: [(method: String, path: String)] = [
        ("GET", "/tables/T"), ("POST", "/tables/T"), ("GET", "/tables/T/a"), ("PATCH", "/tables/T/a"),
        ("PUT", "/tables/T/a"), ("DELETE", "/tables/T/a"), ("GET", "/tables/unknown"), ("GET", "/tables/T/a/b"),
        ("POST", "/tables/T/batch"), ("GET", "/")
    ]

    @Test("every route answers 401 without a valid token, and a valid token gets through")
    func everyRouteNeedsAToken() async throws {
        let table = uniqueTableName("sec")
        let server = try await LiveServer.start(.sqlite, tables: [table], tokens: [StaticToken(secret: Self.token)])
        let credentials: [(String, [String: String])] = [
            ("none", [:]), ("wrong bearer", ["Authorization": "Bearer nope"]),
            ("empty bearer", ["Authorization": "Bearer "]),
            ("basic", ["Authorization": "Basic " + Data(Self.token.utf8).base64EncodedString()]),
            ("wrong zumo", ["X-ZUMO-AUTH": "nope"]),
            ("token as a prefix", ["Authorization": "Bearer " + Self.token + "x"]),
            ("prefix of the token", ["Authorization": "Bearer " + String(Self.token.dropLast())]),
            ("lowercase scheme, wrong token", ["Authorization": "bearer nope"])
        ]
        for (method, path) in Self.routes {
            for (name, headers) in credentials {
                let client = ServerHTTPClient(
                    baseURL: server.baseURL, defaultHeaders: ["ZUMO-API-VERSION": "3.0.0"].merging(headers) { $1 },
                    timeout: 10, retryPolicy: .none)
                let response = try await client.send(
                    HTTPRequest(
                        method: method, path: path.replacingOccurrences(of: "T", with: table),
                        body: method == "GET" || method == "DELETE" ? nil : Array(#"{"id":"a"}"#.utf8)))
                #expect(response.status == 401, "\(method) \(path) with \(name) credentials: \(response.status)")
                #expect((try? JSONParser.parse(response.body))?["error"]?.stringValue != nil, "a JSON error")
            }
            // The query string is not a place for credentials either.
            let client = ServerHTTPClient(
                baseURL: server.baseURL, defaultHeaders: ["ZUMO-API-VERSION": "3.0.0"], timeout: 10, retryPolicy: .none)
            let response = try await client.send(
                HTTPRequest(
                    method: method, path: path.replacingOccurrences(of: "T", with: table),
                    query: [("access_token", Self.token)]))
            #expect(response.status == 401, "\(method) \(path) with the token in the query string")
        }
        // The same requests with the token are answered (so the test above can fail).
        for headers in [["Authorization": "Bearer " + Self.token], ["X-ZUMO-AUTH": Self.token]] {
            let client = ServerHTTPClient(
                baseURL: server.baseURL, defaultHeaders: ["ZUMO-API-VERSION": "3.0.0"].merging(headers) { $1 },
                timeout: 10, retryPolicy: .none)
            let response = try await client.send(HTTPRequest(method: "GET", path: "/tables/" + table))
            #expect(response.status == 200)
        }
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }

    @Test(
        "tablesync-server's usage errors exit 2 like its other refusals: an unknown flag, a log level it does not know")
    func serverUsageErrorsExit2() async throws {
        for arguments in [["--bogus"], ["--log-level", "verbose"]] {
            let refused = try await CLI.runServer(arguments, environment: CLI.environment)
            #expect(refused.status == 2, "\(arguments): exit \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.contains(arguments[0]), "names what is wrong: \(refused.stderr)")
        }
    }

    @Test("the server refuses a non-loopback address without tokens, and starts on one with tokens")
    func nonLoopbackNeedsTokens() async throws {
        let directory = TemporaryDirectory()
        let database = "sqlite:" + directory.file("server.sqlite")
        var environment = CLI.environment
        for host in ["0.0.0.0", "::", "192.0.2.1", "example.com", "127.0.0.1.example.com"] {
            let refused = try await CLI.runServer(
                ["--host", host, "--port", "0", "--database", database, "--table", "t"], environment: environment)
            #expect(refused.status == 2, "--host \(host) without tokens: exit \(refused.status)")
            #expect(
                refused.stderr.lowercased().contains("token"),
                "the message says how to configure tokens: \(refused.stderr)")
        }
        environment["TABLESYNC_SERVER_TOKENS"] = Self.token
        // It started when it logs its port.
        let server = try await ServerProcess.start(
            ["--host", "0.0.0.0", "--database", database, "--table", "t"], logPath: directory.file("server.log"),
            environment: environment, seconds: 30)
        #expect(server.isRunning, "with tokens it listens on 0.0.0.0: \(server.log)")
        #expect(!server.log.contains(Self.token), "the token is not logged")
        await server.stop()
    }

    @Test("the client's token appears nowhere: not in the store, the output, the process list, or the server's log")
    func tokenNeverLeaks() async throws {
        let table = uniqueTableName("sec")
        let server = try await LiveServer.start(.sqlite, tables: [table], tokens: [StaticToken(secret: Self.token)])
        let proxy = try LoopbackProxy(.faults(upstreamPort: server.port))
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        let tokenFile = directory.file("token")
        try Data((Self.token + "\n").utf8).write(to: URL(fileURLWithPath: tokenFile))
        var environment = CLI.environment
        environment["TABLESYNC_TOKEN"] = Self.token
        var outputs: [String] = []
        func run(_ arguments: [String], _ environment: [String: String] = environment) async throws -> Int32 {
            let result = try await CLI.run(["-C", store] + arguments, environment: environment)
            outputs += [result.stdout, result.stderr]
            return result.status
        }
        #expect(try await run(["init", "--remote", proxy.baseURL, "--table", table]) == 0)
        #expect(try await run(["query", "add", table, "all"]) == 0)
        #expect(try await run(["insert", table, #"{"id":"a","text":"x"}"#]) == 0)
        #expect(try await run(["sync"]) == 0)
        #expect(try await run(["sync", "--json"]) == 0)
        // A refused token: the message must not echo it.
        var wrong = environment
        wrong["TABLESYNC_TOKEN"] = Self.token + "-revoked"
        #expect(try await run(["sync"], wrong) == 5)
        #expect(try await run(["sync", "--json"], wrong) == 5)
        // From a token file named in tablesync.json: the path is stored, never the token.
        var settings = try String(contentsOfFile: store + "/tablesync.json", encoding: .utf8)
        settings = settings.replacingOccurrences(
            of: "\"tables\"", with: "\"tokenFile\": \"\(tokenFile)\",\n  \"tables\"")
        try Data(settings.utf8).write(to: URL(fileURLWithPath: store + "/tablesync.json"))
        #expect(try await run(["insert", table, #"{"id":"b","text":"y"}"#], CLI.environment) == 0)
        #expect(try await run(["sync", "--json"], CLI.environment) == 0)
        // While a sync waits on the server, its command line is what `ps` shows.
        proxy.inject(.delayAfterCommit(seconds: 1), times: 3)
        let running = try CLI.start(["-C", store, "sync"], environment: environment)
        while proxy.log.filter({ $0.fault != .none }).isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        let commandLine =
            (try? String(contentsOfFile: "/proc/\(running.processIdentifier)/cmdline", encoding: .utf8)) ?? ""
        #expect(!commandLine.isEmpty && !commandLine.contains(Self.token), "ps shows no token")
        #expect(await CLI.wait(running).status == 0)

        for output in outputs { #expect(!output.contains(Self.token), "the output echoes the token: \(output)") }
        for path in try FileManager.default.subpathsOfDirectory(atPath: store) {
            guard let data = FileManager.default.contents(atPath: store + "/" + path) else { continue }
            #expect(!String(decoding: data, as: UTF8.self).contains(Self.token), "the store's \(path) holds the token")
        }
        proxy.stop()
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }

    /// Injection attempts in the query options: refused as 400, or (when valid OData) bound as values.
    static let refusedOptions: [(String, String)] = [
        ("$filter", "text eq 'a'; DROP TABLE tablesync_records; --"),
        ("$filter", "text eq 'a' or 1=1"),
        ("$filter", "text\" = '' or \"1\" = \"1"),
        ("$filter", "text) or (1 eq 1"),
        ("$filter", "json_extract(data, '$.text') eq 'a'"),
        ("$filter", "text eq 'a' union select * from tablesync_records"),
        ("$filter", "version eq 'AQ=='"),
        ("$filter", "\"text\" eq 'a'"),
        ("$filter", "te'xt eq 'a'"),
        ("$filter", "text eq 'unterminated"),
        ("$orderby", "text; DROP TABLE tablesync_records"),
        ("$orderby", "(select 1)"),
        ("$orderby", "text desc, \"id\""),
        ("$orderby", "text collate nocase"),
        ("$orderby", "1"),
        ("$select", "id,(select 1)"),
        ("$select", "text--"),
        ("$select", "*"),
        ("$select", "text\"),json(\""),
        ("$top", "1; DROP TABLE x"),
        ("$skip", "-1")
    ]

    @Test(
        "query-option injection is refused with 400, and quoted SQL in literals is only ever a value",
        arguments: TestBackend.available)
    func queryOptionInjection(_ backend: TestBackend) async throws {
        let table = uniqueTableName("inj")
        let server = try await LiveServer.start(backend, tables: [table])
        let client = ServerHTTPClient(
            baseURL: server.baseURL, defaultHeaders: ["ZUMO-API-VERSION": "3.0.0"], timeout: 10, retryPolicy: .none)
        let created = try await client.send(
            HTTPRequest(method: "POST", path: "/tables/" + table, body: Array(#"{"id":"a","text":"a"}"#.utf8)))
        #expect(created.status == 201)
        for (name, value) in Self.refusedOptions {
            let response = try await client.send(
                HTTPRequest(method: "GET", path: "/tables/" + table, query: [(name, value)]))
            #expect(response.status == 400, "\(name)=\(value): \(response.status)")
        }
        // Valid OData whose string literals hold SQL: they match nothing and change nothing.
        for value in ["a' or '1'='1", "'; DROP TABLE tablesync_records; --", "a\\' or 1=1 --", "%", "_", "\\"] {
            let literal = value.replacingOccurrences(of: "'", with: "''")
            let response = try await client.send(
                HTTPRequest(
                    method: "GET", path: "/tables/" + table,
                    query: [("$filter", "text eq '\(literal)' or startswith(text, '\(literal)')")]))
            #expect(response.status == 200, "\(literal)")
            #expect(
                (try? JSONParser.parse(response.body))?["items"]?.arrayValue?.isEmpty == true,
                "\(literal) matched nothing")
        }
        #expect(
            try await Reliability.serverContent(server.baseURL, table: table)["a"]?["text"] == "a",
            "the table is intact")
        // The SQL itself: the literal is a bound value, never text of the statement.
        for dialect in [SQLDialect.sqlite, .postgres] {
            let statement = try FilterSQLTranslator.translate(
                try FilterParser.parse("text eq 'x''); DROP TABLE t; --'"), dialect: dialect)
            #expect(!statement.sql.contains("DROP"), "\(statement)")
            #expect(statement.bindings.contains(.text("x'); DROP TABLE t; --")), "\(statement)")
        }
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }

    @Test("no id, however hostile, names a path outside its table directory")
    func idsStayInTheirDirectory() {
        var generator = SeededGenerator(seed: Reliability.seed)
        let alphabet: [Unicode.Scalar] = Array(
            "./\\%^~:-_ aAzZ09é\u{0}\u{1}\u{7F}\u{FEFF}\u{202E}\u{10FFFF}".unicodeScalars)
        let samples = Reliability.scale(bounded: 5_000, long: 200_000)
        var checked = 0
        let fixed = [
            "..", ".", "../../x", "a/../../b", "/etc/passwd", "\\..\\x", "con", "NUL", "com1", "~", "a~b",
            String(repeating: "é", count: 255), String(repeating: ".", count: 255)
        ]
        for index in 0..<(samples + fixed.count) {
            let id: String
            if index < fixed.count {
                id = fixed[index]
            } else {
                var text = String.UnicodeScalarView()
                for _ in 0..<Int.random(in: 1...300, using: &generator) {
                    text.append(alphabet[Int.random(in: 0..<alphabet.count, using: &generator)])
                }
                id = String(text)
            }
            let name = RecordFileName.fileName(for: id)
            #expect(!name.contains("/") && !name.contains("\0"), "\(id.debugDescription) → \(name)")
            #expect(name != "." && name != ".." && !name.hasPrefix("."), "\(id.debugDescription) → \(name)")
            #expect(name.utf8.count <= 255, "\(id.debugDescription) → \(name.utf8.count) bytes")
            #expect(
                name.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 }, "\(id.debugDescription) → \(name)")
            let resolved = URL(fileURLWithPath: "/store/tables/todo/" + name).standardizedFileURL.path
            #expect(
                resolved.hasPrefix("/store/tables/todo/")
                    && !resolved.dropFirst("/store/tables/todo/".count).contains("/"))
            if RecordID.problem(with: id) == nil, !RecordFileName.isHashed(name) {
                #expect(RecordFileName.id(forFileName: name) == id, "\(id.debugDescription) round-trips")
            }
            checked += 1
        }
        #expect(checked == samples + fixed.count)
    }
}

extension CLI {
    /// Runs `tablesync-server ARGUMENTS` to completion off the cooperative thread pool.
    static func runServer(
        _ arguments: [String], environment: [String: String]
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        // A server that wrongly starts would run for ever: it is killed after a bound (the test fails on its status).
        let run = try await runProgram(
            builtProduct("tablesync-server"), arguments, environment: environment, timeout: .seconds(20))
        return (run.status, run.stdout, run.stderr)
    }
}
