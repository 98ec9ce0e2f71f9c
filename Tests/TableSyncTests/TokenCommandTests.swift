import Foundation
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// Tokens that expire: `tokenCommand` in tablesync.json gives the token, run when the first request needs one and
/// again when the server refuses it, as git's credential helpers and kubectl's exec plugins do for their programs.
/// The server's token changes by restarting it on the same database with another accepted token, which is what an
/// expired token looks like to the client: one that was good is refused from one request on. The new server listens
/// on a port of its own, which the store's `remote` is given: its old port may be taken by then, when the whole suite
/// starts servers beside it.
@Suite(.serialized) struct TokenCommandTests {
    /// A store whose `tokenCommand` prints the token file's first line (and drops it when more follow, as a token
    /// service hands out a new token each time) and counts its runs, on a server that accepts `token`.
    struct Setup {
        let directory = TemporaryDirectory()
        var server: LiveServer
        var store: String { directory.file("store") }
        var tokenFile: String { directory.file("token") }
        var runsFile: String { directory.file("runs") }

        /// With `jwt`, the server accepts the JWTs those settings check instead of `token`.
        init(token: String, jwt: JWTSettings? = nil) async throws {
            server = try await LiveServer.start(
                .sqlite, tables: ["todo"], tokens: jwt == nil ? [StaticToken(secret: token)] : []
            ) { $0.jwt = jwt }
            try directory.write("token", token + "\n")
            #expect(try await CLI.run(["-C", store, "init", "--remote", server.baseURL, "--table", "todo"]).status == 0)
            let command =
                "echo run >> '\(runsFile)'; head -n 1 '\(tokenFile)'; "
                    + """
                    if [ $(wc -l < '\(tokenFile)') -gt 1 ]; then tail -n +2 '\(tokenFile)' > '\(tokenFile).next'; mv \
                    '\(tokenFile).next' '\(tokenFile)'; fi
                    """
            var settings = try String(contentsOfFile: store + "/tablesync.json", encoding: .utf8)
            settings = settings.replacingOccurrences(
                of: "\"tables\"", with: "\"tokenCommand\": \(CanonicalJSON.string(.string(command))),\n  \"tables\"")
            try Data(settings.utf8).write(to: URL(fileURLWithPath: store + "/tablesync.json"))
        }

        /// How many times the command ran.
        var runs: Int { ((try? String(contentsOfFile: runsFile, encoding: .utf8)) ?? "").split(separator: "\n").count }

        /// The server, restarted on its database accepting `token` alone: the old token is refused. On its old port
        /// when `keepingPort` (a sync under way goes on talking to it), else on a port of its own.
        mutating func expire(into token: String, keepingPort: Bool = false) async throws {
            let oldURL = server.baseURL
            let database = server.database
            await server.stop()
            server = try await LiveServer.start(
                .sqlite, tables: ["todo"], tokens: [StaticToken(secret: token)], database: database,
                port: keepingPort ? server.port : 0)
            let settings = try String(contentsOfFile: store + "/tablesync.json", encoding: .utf8)
            try Data(settings.replacingOccurrences(of: oldURL, with: server.baseURL).utf8).write(
                to: URL(fileURLWithPath: store + "/tablesync.json"))
        }

        func stop() async {
            await server.stop()
            TestBackend.removeFiles(of: server.database)
        }
    }

    @Test(
        """
        the command runs once per run, again when the server refuses its token; a failing command exits 5 and shows no \
        token
        """
    )
    func commandRunsWhenNeeded() async throws {
        var setup = try await Setup(token: "first-token-1f8a")
        try setup.directory.write("store/tables/todo/a.json", #"{"id": "a", "text": "x"}"# + "\n")
        #expect(try await CLI.run(["-C", setup.store, "sync"]).status == 0)
        #expect(setup.runs == 1, "one run of the command serves every request of the sync")

        // The command still hands out the old token first: the server refuses it, and the next one is asked for.
        try await setup.expire(into: "second-token-77c2")
        try setup.directory.write("token", "first-token-1f8a\nsecond-token-77c2\n")
        try setup.directory.write("store/tables/todo/b.json", #"{"id": "b", "text": "y"}"# + "\n")
        let renewed = try await CLI.run(["-C", setup.store, "sync", "--json"])
        #expect(renewed.status == 0, "\(renewed.stdout) \(renewed.stderr)")
        #expect(setup.runs == 3, "once for the run, once more after the 401")
        #expect(
            try await Reliability.serverRows(setup.server.baseURL, table: "todo", token: "second-token-77c2")["b"]
                != nil)

        try await setup.expire(into: "third-token-0d1e")
        try setup.directory.write("token", "")
        let failed = try await CLI.run(["-C", setup.store, "sync"])
        #expect(failed.status == 5, "\(failed.stderr)")
        #expect(
            failed.stderr.contains("tokenCommand") && failed.stderr.contains("printed no token"), "\(failed.stderr)")
        for token in ["first-token-1f8a", "second-token-77c2", "third-token-0d1e"] {
            #expect(
                !failed.stderr.contains(token) && !renewed.stdout.contains(token) && !renewed.stderr.contains(token))
        }
        await setup.stop()
    }

    @Test(
        """
        a token that expires in the middle of a long sync is renewed through tokenCommand; the sync finishes, nothing \
        lost or sent twice
        """
    )
    func tokenExpiresMidSync() async throws {
        var setup = try await Setup(token: "before-expiry-5b3c")
        // The server holds 3,000 records another store wrote; this store has 300 edits of its own to push.
        let writer = setup.directory.file("writer")
        var environment = CLI.environment
        environment["TABLESYNC_TOKEN"] = "before-expiry-5b3c"
        #expect(
            try await CLI.run(
                ["-C", writer, "init", "--remote", setup.server.baseURL, "--table", "todo"], environment: environment
            ).status == 0)
        for number in 0..<3_000 {
            try setup.directory.write(
                "writer/tables/todo/s\(number).json", #"{"id": "s\#(number)", "n": \#(number)}"# + "\n")
        }
        #expect(try await CLI.run(["-C", writer, "push"], environment: environment).status == 0)
        for number in 0..<300 {
            try setup.directory.write(
                "store/tables/todo/m\(number).json", #"{"id": "m\#(number)", "n": \#(number)}"# + "\n")
        }

        // Pages of 50: the pull runs long enough for the token to expire while it goes.
        let sync = try CLI.start(["-C", setup.store, "sync", "--page-size", "50"])
        try await Reliability.waitUntil("the pull has written some pages") {
            ((try? FileManager.default.contentsOfDirectory(atPath: setup.store + "/tables/todo")) ?? []).count > 500
        }
        try setup.directory.write("token", "after-expiry-9e41\n")
        try await setup.expire(into: "after-expiry-9e41", keepingPort: true)
        #expect(await CLI.wait(sync).status == 0, "the sync finished")
        #expect(setup.runs == 2, "the command ran again once, after the first 401")

        let rows = try await Reliability.serverRows(setup.server.baseURL, table: "todo", token: "after-expiry-9e41")
        #expect(rows.count == 3_300, "the 300 records pushed, each once")
        #expect(rows.values.allSatisfy { $0["version"] != nil })
        let files = try FileManager.default.contentsOfDirectory(atPath: setup.store + "/tables/todo").filter {
            $0.hasSuffix(".json")
        }
        #expect(files.count == 3_300, "every record pulled, none missing")
        let status = try JSONParser.parse(Array(try await CLI.run(["-C", setup.store, "status", "--json"]).stdout.utf8))
        #expect(status["clean"] == true, "nothing left to send: \(status)")
        await setup.stop()
    }

    @Test(
        """
        a JWT that expires in the middle of a long sync is renewed through tokenCommand; the sync finishes, nothing \
        lost or sent twice
        """
    )
    func jwtExpiresMidSync() async throws {
        let issuer = try TestTokenIssuer()
        let writerToken = try await issuer.hs256(TestClaims(sub: "writer"))
        let shortLived = try await issuer.hs256(TestClaims(sub: "reader", lifetime: 3))
        let setup = try await Setup(token: shortLived, jwt: issuer.settings())
        try setup.directory.write(
            "token", shortLived + "\n" + (try await issuer.hs256(TestClaims(sub: "reader"))) + "\n")
        let writer = setup.directory.file("writer")
        var environment = CLI.environment
        environment["TABLESYNC_TOKEN"] = writerToken
        #expect(
            try await CLI.run(
                ["-C", writer, "init", "--remote", setup.server.baseURL, "--table", "todo"], environment: environment
            ).status == 0)
        for number in 0..<1_000 {
            try setup.directory.write(
                "writer/tables/todo/s\(number).json", #"{"id": "s\#(number)", "n": \#(number)}"# + "\n")
        }
        #expect(try await CLI.run(["-C", writer, "push"], environment: environment).status == 0)
        for number in 0..<100 {
            try setup.directory.write(
                "store/tables/todo/m\(number).json", #"{"id": "m\#(number)", "n": \#(number)}"# + "\n")
        }

        // The sync is held still once it has pulled some pages until its token has expired, so the expiry falls in
        // its middle however fast the machine is; its next request is refused and it asks for a new token.
        let sync = try CLI.start(["-C", setup.store, "sync", "--page-size", "50"])
        try await Reliability.waitUntil("the pull has written some pages") {
            ((try? FileManager.default.contentsOfDirectory(atPath: setup.store + "/tables/todo")) ?? []).count > 200
        }
        kill(sync.processIdentifier, SIGSTOP)
        // Time is the behaviour: the token was made before the sync started and lives 3 s (whole seconds in `exp`),
        // so 3.5 s stopped is past its expiry however soon the stop came; a late wake only lengthens it.
        try await Task.sleep(for: .seconds(3.5))
        kill(sync.processIdentifier, SIGCONT)
        #expect(await CLI.wait(sync).status == 0, "the sync finished")
        #expect(setup.runs == 2, "the command ran again once, after the expired token's 401")

        let rows = try await Reliability.serverRows(setup.server.baseURL, table: "todo", token: writerToken)
        #expect(rows.count == 1_100, "the 100 records pushed, each once")
        let files = try FileManager.default.contentsOfDirectory(atPath: setup.store + "/tables/todo").filter {
            $0.hasSuffix(".json")
        }
        #expect(files.count == 1_100, "every record pulled, none missing")
        let status = try JSONParser.parse(Array(try await CLI.run(["-C", setup.store, "status", "--json"]).stdout.utf8))
        #expect(status["clean"] == true, "nothing left to send: \(status)")
        await setup.stop()
    }
}
