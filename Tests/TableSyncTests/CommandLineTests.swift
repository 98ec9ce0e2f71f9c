import Foundation
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport
@testable import TableSync
@testable import tablesync

/// The `tablesync` executable, run as cron would run it.
@Suite struct CommandLineTests {
    let tablesync = builtProduct("tablesync")

    @Test("library errors whose fix is an option get the command line's flag")
    func flagHints() {
        let massDelete = MassDeleteRefused(table: "todo", removing: 8, localRecords: 10)
        #expect(
            FlagHint.adding(to: massDelete.description, for: massDelete).hasSuffix(
                "really deleted them (--allow-mass-delete)."))
        let purge = PurgeRefused(table: "todo", pendingChanges: 2)
        #expect(FlagHint.adding(to: purge.description, for: purge).hasSuffix("(--force)."))
        let learned = SyncError.protocolVersionRefused(
            url: "http://x", refused: 3, accepted: 2, learnedForNextRun: true)
        #expect(FlagHint.hint(for: learned) == nil, "nothing to do: the next run speaks the learned version")
        #expect(FlagHint.hint(for: SyncError.unreachable(url: "http://x", reason: "down")) == nil)
    }

    @Test("status shows each kind of change under its heading, in the order the push handles them")
    func statusText() async throws {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        let initialized = try await runProgram(
            tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo", "--table", "notes"])
        #expect(initialized.status == 0)
        #expect(try await runProgram(tablesync, ["-C", store, "insert", "todo", #"{"id": "p1"}"#]).status == 0)
        try directory.write("store/tables/todo/r1.json", #"{"id": "r1", "text": "x"}"#)
        try directory.write("store/tables/todo/b.json", "{ broken")
        try directory.write("store/tables/todo/r1.json.orig", "x")
        try directory.write(
            "store/tables/notes/s1.json", #"{"id":"s1","version":"AAA=","updatedAt":"2024-01-01T00:00:00.000Z"}"#)
        let status = try await runProgram(tablesync, ["-C", store, "status"])
        #expect(
            status.stdout == """
                Store \(store), remote http://127.0.0.1:9

                Pending operations (1, pushed in this order):
                  insert todo/p1

                Not yet compared with the server: 1 record file(s) (notes 1).
                  They carry server versions this store did not sync (a fresh clone, a restore, a lost .tablesync/, \
                or a git
                  merge or checkout). The next push or sync compares them with the server first and sends only real \
                edits.

                Changed by hand, queued by the next push (1):
                  created  tables/todo/r1.json

                Broken files, skipped until fixed (1):
                  tables/todo/b.json:1:3: unexpected 'b'; expected a member name in double quotes

                Ignored (1): \(LeftoverFileName.notice)
                  tables/todo/r1.json.orig

                """, "\(status.stdout)")
    }

    @Test func initInsertStatusAndExitCodes() async throws {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        #expect(
            try await runProgram(tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo"])
                .status == 0)
        let inserted = try await runProgram(
            tablesync, ["-C", store, "insert", "todo", #"{"id": "a", "text": "Buy milk"}"#, "--json"])
        #expect(inserted.status == 0)
        #expect(try JSONParser.parse(inserted.stdout)["id"] == "a")
        let status = try await runProgram(tablesync, ["-C", store, "status", "--json"])
        #expect(status.status == 0)
        #expect(try JSONParser.parse(status.stdout)["pending"]?.arrayValue?.count == 1)
        #expect(try await runProgram(tablesync, ["-C", store, "insert", "todo", "{not json"]).status == 2)
        #expect(try await runProgram(tablesync, ["-C", store, "insert", "nope", "{}"]).status == 2)
        #expect(try await runProgram(tablesync, ["-C", directory.path, "status"]).status == 2, "not a store: usage")
        let noScheme = try await runProgram(
            tablesync, ["-C", directory.file("other"), "init", "--remote", "127.0.0.1:8080", "--table", "todo"])
        #expect(noScheme.status == 2, "a usage error of the flag: \(noScheme.stderr)")
        #expect(noScheme.stderr.contains("--remote"), "\(noScheme.stderr)")
        try directory.write("store/tables/todo/b.json", "{\"id\": 1}")
        let broken = try await runProgram(tablesync, ["-C", store, "verify"])
        #expect(broken.status == 7)
        #expect(broken.stdout.contains("tables/todo/b.json"))
        let query = try await runProgram(tablesync, ["-C", store, "query", "todo", "--filter", "text eq 'Buy milk'"])
        #expect(query.status == 0)
        #expect(try JSONParser.parse(query.stdout).arrayValue?.count == 1)
        #expect(!query.stderr.contains("warning"), "every property it names is held: \(query.stderr)")
        // A string literal without its quotes is a property to OData: the query runs, and says so.
        let typo = try await runProgram(tablesync, ["-C", store, "query", "todo", "--filter", "text eq Buymilk"])
        #expect(typo.status == 0)
        #expect(try JSONParser.parse(typo.stdout).arrayValue?.isEmpty == true)
        #expect(
            typo.stderr.contains("no record of todo has a property 'Buymilk'; a string is written in quotes"),
            "\(typo.stderr)")
    }

    @Test(
        """
        TABLESYNC_DURABILITY: auto, syncfs and fsync work; any other value stops the command before it writes, naming \
        the variable
        """
    )
    func durabilitySetting() async throws {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        var environment = ProcessInfo.processInfo.environment
        environment["TABLESYNC_DURABILITY"] = "sometimes"
        let refused = try await runProgram(
            tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo"],
            environment: environment)
        #expect(refused.status == 2)
        #expect(
            refused.stderr.contains(
                "TABLESYNC_DURABILITY=sometimes is not understood; set it to auto, syncfs, fsync, or unset it"),
            "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store + "/tablesync.json"), "nothing was made")
        #expect(
            try await runProgram(tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo"])
                .status == 0)
        for (index, value) in ["auto", "syncfs", "fsync"].enumerated() {
            environment["TABLESYNC_DURABILITY"] = value
            // Each accepted value lets a local change through (the disk-fault suite runs whole syncs under syncfs and
            // fsync).
            let inserted = try await runProgram(
                tablesync, ["-C", store, "insert", "todo", #"{"id": "r\#(index)", "n": 1}"#],
                environment: environment)
            #expect(inserted.status == 0, "\(value): \(inserted.stderr)")
        }
        environment["TABLESYNC_DURABILITY"] = "always"
        let insert = try await runProgram(
            tablesync, ["-C", store, "insert", "todo", #"{"id": "x"}"#], environment: environment)
        #expect(insert.status == 2 && insert.stderr.contains("TABLESYNC_DURABILITY=always"), "\(insert.stderr)")
        let status = try await runProgram(tablesync, ["-C", store, "status", "--json"])
        #expect(
            try JSONParser.parse(status.stdout)["pending"]?.arrayValue?.count == 3,
            "the three accepted inserts, and not the refused one")
        #expect(try await runProgram(tablesync, ["-C", store, "verify"]).status == 0)
    }

    @Test("--verbose logs each request, pulled page and pushed batch on standard error, and never the token")
    func verboseLogsTheWireWithoutTheToken() async throws {
        let directory = TemporaryDirectory()
        let token = "a-secret-token-\(UUID().uuidString)"
        let server = try await LiveServer.start(.sqlite, tables: ["todo"], tokens: [StaticToken(secret: token)])
        defer { TestBackend.removeFiles(of: server.database) }
        let store = directory.file("store")
        #expect(
            try await runProgram(tablesync, ["-C", store, "init", "--remote", server.baseURL, "--table", "todo"]).status
                == 0)
        #expect(
            try await runProgram(tablesync, ["-C", store, "insert", "todo", #"{"id": "a", "text": "Buy milk"}"#]).status
                == 0)
        let environment = TransportTests.environment(["TABLESYNC_TOKEN": token])
        let quiet = try await runProgram(tablesync, ["-C", store, "sync"], environment: environment)
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(!quiet.stderr.contains("request"), "no request lines without --verbose: \(quiet.stderr)")

        #expect(
            try await runProgram(
                tablesync, ["-C", store, "update", "todo", #"{"id": "a", "text": "Buy milk", "done": true}"#]
            ).status == 0)
        let verbose = try await runProgram(tablesync, ["-C", store, "sync", "--verbose"], environment: environment)
        #expect(verbose.status == 0, "\(verbose.stderr)")
        #expect(verbose.stderr.contains("request") && verbose.stderr.contains("HTTP 200"), "\(verbose.stderr)")
        #expect(verbose.stderr.contains("pushed") && verbose.stderr.contains("1 applied"), "\(verbose.stderr)")
        #expect(verbose.stderr.contains("pulled page") && verbose.stderr.contains("table=todo"), "\(verbose.stderr)")
        #expect(!verbose.stderr.contains(token), "the token never reaches the log")
        await server.stop()
    }

    @Test("-C STORE stands before the subcommand, as with git, or after it, and tablesync --help shows it")
    func storeOptionBeforeOrAfterTheSubcommand() async throws {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        let help = try await runProgram(tablesync, ["--help"])
        #expect(help.stdout.contains("USAGE: tablesync [-C <STORE>] [--json] <subcommand>"), "\(help.stdout)")
        #expect(help.stdout.contains("-C <STORE>") && help.stdout.contains("--json"), "\(help.stdout)")
        #expect(
            try await runProgram(tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo"])
                .status == 0)
        #expect(try await runProgram(tablesync, ["insert", "todo", #"{"id": "a"}"#, "-C", store]).status == 0)
        for arguments in [
            ["-C", store, "status", "--json"], ["status", "-C", store, "--json"], ["-C" + store, "status", "--json"],
            ["--json", "status", "-C", store]
        ] {
            let status = try await runProgram(tablesync, arguments)
            #expect(status.status == 0, "\(arguments): \(status.stderr)")
            #expect(
                try JSONParser.parse(status.stdout)["pending"]?.arrayValue?.count == 1, "\(arguments): \(status.stdout)"
            )
        }
        #expect(
            try await runProgram(tablesync, ["-C", store, "query", "add", "todo", "all"]).status == 0,
            "a sub-subcommand")
        let listed = try await runProgram(tablesync, ["query", "list", "-C", store, "--json"])
        let ids = try JSONParser.parse(listed.stdout)["queries"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
        #expect(
            ids == ["all", "todo"], "the one added, and the one init adds per table: \(listed.stdout) \(listed.stderr)")
        let selected = try await runProgram(tablesync, ["-C", store, "query", "todo", "--filter", "id eq 'a'"])
        #expect(
            try JSONParser.parse(selected.stdout).arrayValue?.count == 1,
            "the default sub-subcommand: \(selected.stderr)")
    }

    @Test("--conflict-policy and --api-version are typed: --help lists their values, any other value is bad usage")
    func typedOptionValues() async throws {
        let directory = TemporaryDirectory()
        let initHelp = try await runProgram(tablesync, ["init", "--help"])
        #expect(initHelp.stdout.contains("(values: 2, 3)"), "\(initHelp.stdout)")
        let pushHelp = try await runProgram(tablesync, ["push", "--help"])
        for policy in ["manual", "server-wins", "client-wins"] {
            // A list of values, each in a column beside what it does (not a sentence naming them).
            #expect(
                pushHelp.stdout.contains(policy + "  "),
                "push --help lists \(policy) with what it does: \(pushHelp.stdout)")
        }
        let badPolicy = try await runProgram(
            tablesync,
            ["-C", directory.file("a"), "init", "--remote", "http://127.0.0.1:9", "--conflict-policy", "mine"])
        #expect(badPolicy.status == 2)
        #expect(badPolicy.stderr.contains("'manual', 'server-wins' or 'client-wins'"), "\(badPolicy.stderr)")
        let badVersion = try await runProgram(
            tablesync, ["-C", directory.file("a"), "init", "--remote", "http://127.0.0.1:9", "--api-version", "4"])
        #expect(badVersion.status == 2, "bad usage, not a broken store: \(badVersion.stderr)")
        #expect(!directory.exists("a/tablesync.json"))
        let good = try await runProgram(
            tablesync,
            [
                "-C", directory.file("a"), "init", "--remote", "http://127.0.0.1:9",
                "--api-version", "2", "--conflict-policy", "server-wins"
            ])
        #expect(good.status == 0, "\(good.stderr)")
        let settings = try JSONParser.parse(directory.read("a/tablesync.json"))
        #expect(settings["apiVersion"] == 2 && settings["conflictPolicy"] == "server-wins", "\(settings)")
    }

    @Test("resolve takes exactly one of --keep-local, --take-server and --discard, and a record named TABLE/ID")
    func resolveTakesOneChoice() async throws {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        #expect(
            try await runProgram(tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo"])
                .status == 0)
        let two = try await runProgram(tablesync, ["-C", store, "resolve", "todo/a", "--keep-local", "--discard"])
        #expect(
            two.status == 2 && two.stderr.contains("--discard") && two.stderr.contains("--keep-local"), "\(two.stderr)")
        let none = try await runProgram(tablesync, ["-C", store, "resolve", "todo/a"])
        #expect(none.status == 2 && none.stderr.contains("Missing one of"), "\(none.stderr)")
        let noSlash = try await runProgram(tablesync, ["-C", store, "resolve", "todo-a", "--discard"])
        #expect(noSlash.status == 2 && noSlash.stderr.contains("name the record as TABLE/ID"), "\(noSlash.stderr)")
        let help = try await runProgram(tablesync, ["resolve", "--help"])
        #expect(help.stdout.contains("<TABLE/ID> --keep-local|--take-server|--discard"), "\(help.stdout)")
        let one = try await runProgram(tablesync, ["-C", store, "resolve", "todo/a", "--take-server"])
        #expect(
            one.status == 2 && one.stderr.contains("no conflict waits for todo/a"),
            "parsed, then refused by the store: \(one.stderr)")
    }

    @Test(
        """
        with --json, bad usage is one JSON document on standard output, exit code \
        2; without it, text on standard error
        """,
        arguments: [
            ["status", "--bogus"], ["pull"], ["frob"], ["resolve", "todo/a", "--keep-local", "--discard"],
            ["push", "--attempts", "0"], ["init", "--remote", "http://127.0.0.1:9", "--api-version", "4"],
            ["insert", "todo", "{not json"]
        ])
    func jsonCoversUsageErrors(_ arguments: [String]) async throws {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        #expect(
            try await runProgram(tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo"])
                .status == 0)
        for json in [["--json", "-C", store] + arguments, ["-C", store] + arguments + ["--json"]] {
            let run = try await runProgram(tablesync, json)
            #expect(run.status == 2, "\(json): \(run.stderr)")
            let document = try JSONParser.parse(run.stdout)
            #expect(document["exitCode"] == 2, "\(json): \(run.stdout)")
            #expect(document["error"]?.stringValue?.isEmpty == false, "\(json): one sentence: \(run.stdout)")
            #expect(run.stderr.isEmpty, "\(json): nothing else: \(run.stderr)")
        }
        let text = try await runProgram(tablesync, ["-C", store] + arguments)
        #expect(
            text.status == 2 && text.stdout.isEmpty && text.stderr.hasPrefix("Error: "), "\(arguments): \(text.stderr)")
    }

    @Test("an error is never printed onto a progress line: on a terminal the line is erased first")
    func progressLineErasedBeforeAnError() async throws {
        // A server without extensions that ignores $skip: the first page is taken (a progress line), its repeat is an
        // error.
        let item =
            #""createdAt":"2024-01-01T00:00:00.000Z","updatedAt":"2024-01-01T00:00:00.000Z","#
            + #""version":"AQ==","deleted":false"#
        let page =
            "{\"items\":[" + (0..<3).map { #"{"id":"k\#($0)",\#(item)}"# }.joined(separator: ",")
            + "],\"nextLink\":\"/tables/todo?x\"}"
        let hostile = try HostileServer { request in
            request.method == "GET"
                ? .json(page, extensions: false) : .json(#"{"error":"no"}"#, status: 400, extensions: false)
        }
        defer { hostile.stop() }
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        #expect(
            try await runProgram(tablesync, ["-C", store, "init", "--remote", hostile.baseURL, "--table", "todo"])
                .status == 0)
        let pulled = try await TerminalRun.run([
            "-C", store, "pull", "todo", "--query-id", "all", "--page-size", "3", "--attempts", "1"
        ])
        #expect(pulled.status == 4, "an answer the protocol does not allow: \(pulled.terminal)")
        #expect(pulled.terminal.contains("pull todo:"), "a progress line showed: \(pulled.terminal.debugDescription)")
        #expect(
            pulled.terminal.contains("\r\u{1B}[2Ktablesync: ") && pulled.terminal.contains("ignores $skip"),
            "the error starts on an erased line: \(pulled.terminal.debugDescription)")
    }

    @Test("a pull shows done of total, rate and time left: rewritten in place on a terminal, as log lines otherwise")
    func pullProgressFigures() async throws {
        let server = try await LiveServer.start(.sqlite, tables: ["todo"])
        defer { TestBackend.removeFiles(of: server.database) }
        let directory = TemporaryDirectory()
        let writer = directory.file("writer")
        #expect(
            try await runProgram(tablesync, ["-C", writer, "init", "--remote", server.baseURL, "--table", "todo"])
                .status == 0)
        for index in 0..<25 { try directory.write("writer/tables/todo/r\(index).json", #"{"id": "r\#(index)"}"#) }
        let pushed = try await runProgram(tablesync, ["-C", writer, "push"])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(pushed.stderr.contains("push: 25/25 operations settled (100%)"), "\(pushed.stderr)")

        let figures = #/pull todo: (page 1, )?10/25 records \(40%\), [0-9.,]+ records/s, [0-9]+:[0-9]{2} left/#
        for (name, onTerminal) in [("terminal", true), ("log", false)] {
            let store = directory.file(name)
            #expect(
                try await runProgram(tablesync, ["-C", store, "init", "--remote", server.baseURL, "--table", "todo"])
                    .status == 0)
            let arguments = ["-C", store, "pull", "todo", "--query-id", "all", "--page-size", "10"]
            if onTerminal {
                let pulled = try await TerminalRun.run(arguments)
                #expect(pulled.status == 0, "\(pulled.terminal)")
                #expect(
                    pulled.terminal.contains("\r\u{1B}[2Kpull todo: 10/25 records (40%), "),
                    "\(pulled.terminal.debugDescription)")
                #expect(pulled.terminal.contains(figures), "\(pulled.terminal.debugDescription)")
                #expect(
                    pulled.terminal.contains("pull todo: 25/25 records (100%), "), "\(pulled.terminal.debugDescription)"
                )
                #expect(
                    pulled.terminal.hasSuffix(ProgressDisplay.eraseLine),
                    "the line is erased at the end: \(pulled.terminal.debugDescription)")
            } else {
                let pulled = try await runProgram(tablesync, arguments)
                #expect(pulled.status == 0, "\(pulled.stderr)")
                let lines = pulled.stderr.split(separator: "\n")
                #expect(
                    lines.count == 3 && lines.allSatisfy { $0.contains(" info tablesync") },
                    "timestamped log lines: \(pulled.stderr)")
                #expect(lines.first?.contains("pull todo: page 1, 10/25 records (40%), ") == true, "\(pulled.stderr)")
                #expect(pulled.stderr.contains(figures) && !pulled.stderr.contains("\u{1B}"), "\(pulled.stderr)")
            }
        }
        await server.stop()
    }

    @Test("both executables print the one version with --version, and exit 0")
    func version() async throws {
        for program in [tablesync, builtProduct("tablesync-server")] {
            let run = try await runProgram(program, ["--version"])
            #expect(
                run.status == 0 && run.stdout == TableSyncVersion.current + "\n",
                "\(program): \(run.stdout) \(run.stderr)")
        }
        #expect(try await runProgram(tablesync, ["--help"]).stdout.contains("--version"))
    }

    @Test("tablesync-server with no database and no table serves TodoItem from a SQLite file in its working directory")
    func serverDefaults() async throws {
        let directory = TemporaryDirectory()
        let server = try await ServerProcess.start(
            [], logPath: directory.file("server.log"), environment: CLI.environment, directory: directory.path)
        // The log names the defaults, then the port.
        let text = server.log
        #expect(
            text.contains("no --database given") && text.contains(directory.path + "/tablesync-server.sqlite"),
            "\(text)")
        #expect(text.contains("no --table given") && text.contains("TodoItem"), "\(text)")
        let http = ServerHTTPClient(
            baseURL: server.baseURL, defaultHeaders: ["ZUMO-API-VERSION": "3.0.0"], retryPolicy: .none)
        let answer = try? await http.send(HTTPRequest(method: "GET", path: "/tables/TodoItem"))
        await server.stop()
        #expect(answer?.status == 200)
        #expect(FileManager.default.fileExists(atPath: directory.file("tablesync-server.sqlite")))
    }

    @Test func aSecondWriterExitsLockedAtOnce() async throws {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        _ = try await runProgram(tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo"])
        let holder = try SyncContext(directory: store, purpose: "holding for a test")
        let started = Date()
        let second = try await runProgram(tablesync, ["-C", store, "insert", "todo", "{}"])
        #expect(second.status == 6)
        #expect(second.stderr.contains("locked") && second.stderr.contains("holding for a test"))
        #expect(Date().timeIntervalSince(started) < 10, "the second run does not wait for the lock")
        #expect(try await runProgram(tablesync, ["-C", store, "status"]).status == 0, "status needs no lock")
        #expect(
            try await runProgram(tablesync, ["-C", store, "verify"]).status == 0,
            "nor does verify: it runs beside a sync")
        await holder.close()
        #expect(try await runProgram(tablesync, ["-C", store, "insert", "todo", "{}"]).status == 0)
    }

    @Test(
        """
        control bytes in a file name never reach the terminal raw: status and verify print them escaped, in a fixed \
        order
        """
    )
    func controlBytesAreEscaped() async throws {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        _ = try await runProgram(tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo"])
        // A name that would turn the terminal red and ring it, and one that reverses the text after it.
        try directory.write("store/tables/todo/\u{1B}[31mred\u{07}.txt", "x\n")
        try directory.write("store/tables/todo/a\u{202E}txt.json", "{}\n")
        for command in ["status", "verify"] {
            let run = try await runProgram(tablesync, ["-C", store, command])
            #expect(
                !run.stdout.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{202E}" },
                "\(command): \(run.stdout.debugDescription)")
            #expect(
                run.stdout.contains("\\x1B[31mred\\x07.txt") && run.stdout.contains("a\\u{202E}txt.json"),
                "\(command): \(run.stdout)")
        }
        let first = try await runProgram(tablesync, ["-C", store, "verify", "--json"]).stdout
        #expect(
            try await runProgram(tablesync, ["-C", store, "verify", "--json"]).stdout == first,
            "the same findings in the same order")
    }

    @Test(
        """
        a run killed mid-write of a 2 MB record (kill -9, the OOM killer, a power cut of the process): the file holds \
        the old or the new version, never a torn one, and the store verifies
        """
    )
    func aWriterKilledMidWriteLeavesTheOldOrTheNewFile() async throws {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        _ = try await runProgram(tablesync, ["-C", store, "init", "--remote", "http://127.0.0.1:9", "--table", "todo"])
        let big = String(repeating: "x", count: 2_000_000)
        let versions = ["old", "new"].map { #"{"id": "a", "body": "\#($0)\#(big)"}"# }
        let versionFiles = try versions.enumerated().map { index, text in
            try directory.write("version\(index).json", text)
            return directory.file("version\(index).json")
        }
        #expect(
            try await runProgram(
                tablesync, ["-C", store, "insert", "todo", versions[0].replacingOccurrences(of: big, with: "")]
            ).status == 0)
        #expect(
            try await runProgram(tablesync, ["-C", store, "update", "todo", "-"], input: versionFiles[0]).status == 0)
        let expected = try versions.map { try CanonicalJSON.encode(JSONParser.parse($0)) }
        /// One `update` of the big record, from the version file `round` picks, killed after `delay` if still
        /// running; whether it was killed, and how long it ran.
        func update(round: Int, killingAfter delay: Duration?) async throws -> (killed: Bool, ran: Duration) {
            let clock = ContinuousClock()
            let started = clock.now
            let process = try CLI.start(["-C", store, "update", "todo", "-"], input: versionFiles[(round + 1) % 2])
            var wasKilled = false
            if let delay {
                try await Task.sleep(for: delay)
                if process.isRunning {
                    kill(process.processIdentifier, SIGKILL)
                    wasKilled = true
                }
            }
            _ = await CLI.wait(process)
            let ran = clock.now - started
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: directory.file("store/tables/todo/a.json"))))
            #expect(expected.contains(bytes), "round \(round): the record file is torn (\(bytes.count) bytes)")
            let verify = try await runProgram(tablesync, ["-C", store, "verify", "--json"])
            #expect(verify.status == 0, "round \(round): \(verify.stdout)")
            return (wasKilled, ran)
        }
        // The kills land at random points of a run as long as this machine takes for one now, so that a loaded
        // machine (a slow run) and a quiet one (a fast run) both see runs killed mid-way. A run that ends before its
        // kill narrows the window for the next.
        var window = max(try await update(round: 0, killingAfter: nil).ran, .milliseconds(2))
        var generator = SeededGenerator(seed: 5)
        var killed = 0
        var round = 1
        while round <= 12 || (killed < 4 && round <= 40) {
            let fraction = Double.random(in: 0..<1, using: &generator)
            if try await update(round: round, killingAfter: window * fraction).killed {
                killed += 1
            } else {
                window = window * 0.7
            }
            round += 1
        }
        print("writer killed mid-write: \(killed) of \(round - 1) runs killed")
        #expect(killed > 0, "at least one run was killed mid-way")
    }
}
