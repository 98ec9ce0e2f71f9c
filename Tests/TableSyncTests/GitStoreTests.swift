import Foundation
import SyncProtocol
import Testing
import TestSupport

/// Stores kept in git, with the real `git` and the real `tablesync` against a real server: clones, a lost cache,
/// merges through the merge driver, a revert and a rebase of sync commits.
@Suite(.serialized) struct GitStoreTests {
    /// A directory of stores and git repositories, the server they sync with, and the environment both programs
    /// run in (a git identity of its own, no system or user git config).
    final class World: Sendable {
        let directory = TemporaryDirectory()
        let server: LiveServer
        let environment: [String: String]

        init() async throws {
            server = try await LiveServer.start(.sqlite, tables: ["todo"])
            var environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
            environment["HOME"] = directory.path
            environment["GIT_CONFIG_NOSYSTEM"] = "1"
            for role in ["AUTHOR", "COMMITTER"] {
                environment["GIT_\(role)_NAME"] = "TableSync test"
                environment["GIT_\(role)_EMAIL"] = "test@tablesync.invalid"
            }
            self.environment = environment
        }

        func path(_ relative: String) -> String { directory.file(relative) }

        /// Runs `tablesync -C <repository>/store arguments`.
        @discardableResult
        func tablesync(_ repository: String, _ arguments: String...) async throws -> (status: Int32, stdout: String, stderr: String) {
            let run = try await runProgram(builtProduct("tablesync"), ["-C", path(repository) + "/store"] + arguments, environment: environment)
            return (run.status, run.stdout, run.stderr)
        }

        /// `tablesync … --json`, parsed; records an issue when the exit status is not `status`.
        func tablesyncJSON(_ repository: String, _ arguments: String..., status: Int32 = 0,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws -> JSONValue {
            let run = try await runProgram(builtProduct("tablesync"), ["-C", path(repository) + "/store"] + arguments + ["--json"],
                                           environment: environment)
            #expect(run.status == status, "tablesync \(arguments): \(run.stdout) \(run.stderr)", sourceLocation: sourceLocation)
            return try JSONParser.parse(Array(run.stdout.utf8))
        }

        /// Runs `git -C <directory> arguments`; records an issue when it fails, unless `mayFail`.
        @discardableResult
        func git(_ repository: String, _ arguments: String..., mayFail: Bool = false,
                 sourceLocation: SourceLocation = #_sourceLocation) async throws -> (status: Int32, stdout: String) {
            let run = try await runProgram("/usr/bin/env", ["git", "-C", path(repository)] + arguments, environment: environment)
            if !mayFail { #expect(run.status == 0, "git \(arguments): \(run.stdout) \(run.stderr)", sourceLocation: sourceLocation) }
            return (run.status, run.stdout)
        }

        /// A repository `name` with a store of `todo` holding records r1…r`count`, synced and committed.
        func seededRepository(_ name: String, count: Int) async throws {
            try FileManager.default.createDirectory(atPath: path(name), withIntermediateDirectories: true)
            try await git(name, "init", "-q", "-b", "main")
            #expect(try await tablesync(name, "init", "--remote", server.baseURL, "--table", "todo").status == 0)
            for number in 1...count {
                try write(name, "r\(number)", #"{"id": "r\#(number)", "text": "item \#(number)", "done": false}"#)
            }
            #expect(try await tablesync(name, "sync", "--commit").status == 0)
        }

        /// A store outside git that stands for other users of the server: it pulls the table, and its edits are
        /// the server's changes.
        func otherUser() async throws {
            #expect(try await tablesync("other", "init", "--remote", server.baseURL, "--table", "todo").status == 0)
            #expect(try await tablesync("other", "sync").status == 0)
        }

        func write(_ repository: String, _ id: String, _ json: String) throws {
            try directory.write("\(repository)/store/tables/todo/\(id).json", json + "\n")
        }

        func record(_ repository: String, _ id: String) throws -> [String: JSONValue]? {
            guard let bytes = FileManager.default.contents(atPath: path("\(repository)/store/tables/todo/\(id).json")) else { return nil }
            return try JSONParser.parse(Array(bytes)).objectValue
        }

        /// Edits properties of record `id` in `repository` by hand.
        func edit(_ repository: String, _ id: String, _ changes: [String: JSONValue]) throws {
            var record = try #require(try self.record(repository, id))
            for (name, value) in changes { record[name] = value }
            try directory.write("\(repository)/store/tables/todo/\(id).json", CanonicalJSON.string(.object(record)))
        }

        /// Every record file of `repository`'s store, by id.
        func records(_ repository: String) throws -> [String: [String: JSONValue]] {
            let names = try FileManager.default.contentsOfDirectory(atPath: path("\(repository)/store/tables/todo"))
            var records: [String: [String: JSONValue]] = [:]
            for name in names where name.hasSuffix(".json") {
                let id = String(name.dropLast(5))
                records[id] = try record(repository, id)
            }
            return records
        }

        func stop() async {
            await server.stop()
            TestBackend.removeFiles(of: server.database)
        }
    }

    @Test("a clone's first sync sends one update per file edited in the clone and nothing for the rest; the same after losing .tablesync/")
    func cloneAndLostCache() async throws {
        let world = try await World()
        try await world.seededRepository("a", count: 8)
        try await world.git(".", "clone", "-q", "a", "b")
        try await world.otherUser()
        // Changes on the server after the commit: r2 edited, r4 deleted, r6 edited and edited back.
        try world.edit("other", "r2", ["text": "changed on the server"])
        try FileManager.default.removeItem(atPath: world.path("other/store/tables/todo/r4.json"))
        try world.edit("other", "r6", ["text": "briefly different"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        try world.edit("other", "r6", ["text": "item 6"])
        #expect(try await world.tablesync("other", "sync").status == 0)

        // The clone, edited before its first sync.
        try world.edit("b", "r3", ["text": "edited in the clone"])
        try world.edit("b", "r7", ["done": true])
        let status = try await world.tablesyncJSON("b", "status")
        let kinds = status["handEdits"]?.arrayValue?.compactMap { $0["change"]?.stringValue } ?? []
        #expect(kinds.count == 8 && kinds.allSatisfy { $0 == "uncompared" }, "not called created by hand: \(kinds)")
        let versionsBefore = try world.records("other").mapValues { $0["version"] }

        let sync = try await world.tablesyncJSON("b", "sync", status: 3)
        let push = try #require(sync["push"])
        #expect(push["applied"] == 2, "exactly the two edits are sent: \(push)")
        #expect(push["compared"]?["edited"] == 2)
        #expect(push["compared"]?["unchanged"] == 3, "r1, r5, r8")
        #expect(push["compared"]?["takenFromServer"] == 2, "r4 removed, r6 back to the server's copy")
        #expect(push["compared"]?["conflicts"] == ["todo/r2"], "the server moved on and the file differs: a person decides")
        #expect(push["waiting"] == ["todo/r2"])
        #expect(try world.record("b", "r4") == nil)
        let conflicts = try await world.tablesyncJSON("b", "conflicts", status: 3)
        let conflict = conflicts["conflicts"]?.arrayValue?.first
        #expect(conflict?["server"]?["text"] == "changed on the server", "both sides: \(conflicts)")
        #expect(conflict?["local"]?["text"] == "item 2")

        // The server got the two edits and nothing else.
        #expect(try await world.tablesync("other", "sync").status == 0)
        let versionsAfter = try world.records("other").mapValues { $0["version"] }
        #expect(versionsAfter.filter { versionsBefore[$0.key] != $0.value }.keys.sorted() == ["r3", "r7"])
        #expect(try world.record("other", "r3")?["text"] == "edited in the clone")
        #expect(try world.record("other", "r7")?["done"] == true)
        #expect(try await world.tablesync("b", "resolve", "todo/r2", "--take-server").status == 0)
        #expect(try await world.tablesync("b", "sync").status == 0)
        #expect(try world.records("b") == world.records("other"), "the clone converged with the server")

        // The first repository, synced, loses its cache: nothing is sent, every file is adopted.
        #expect(try await world.tablesync("a", "sync").status == 0)
        try FileManager.default.removeItem(atPath: world.path("a/store/.tablesync"))
        let adopted = try await world.tablesyncJSON("a", "sync")
        #expect(adopted["push"]?["applied"] == 0, "\(adopted)")
        #expect(adopted["push"]?["compared"]?["conflicts"] == [])
        #expect(adopted["push"]?["compared"]?["unchanged"] == 7, "r1…r8 but r4")
        #expect(try world.records("a") == world.records("other"))
        let clean = try await world.tablesyncJSON("a", "status")
        #expect(clean["clean"] == true, "\(clean)")
        await world.stop()
    }

    @Test("two clones that sync and commit merge without conflicts; the merged store verifies and converges; a revert too")
    func mergeRevertAndRebase() async throws {
        let world = try await World()
        try await world.seededRepository("a", count: 6)
        try await world.git(".", "clone", "-q", "a", "b")
        #expect(try await world.tablesync("b", "git-setup").status == 0)
        #expect(try await world.tablesync("b", "sync").status == 0, "a clone's first sync, before the server moves")
        try await world.otherUser()

        // The server moves; a syncs; the server moves again; b syncs. Both commit.
        try world.edit("other", "r1", ["text": "first server change"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        try world.edit("a", "r4", ["done": true])
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try world.edit("other", "r1", ["text": "second server change"])
        try world.edit("other", "r2", ["done": true])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("b", "sync", "--commit").status == 0)
        try world.write("other", "r9", #"{"id": "r9", "text": "new on the server"}"#)
        #expect(try await world.tablesync("other", "sync").status == 0)

        // a merges b: every difference was made by a sync or by a pushed edit.
        try await world.git("a", "pull", "-q", "--no-rebase", "--no-edit", world.path("b"), "main")
        #expect(try await world.git("a", "diff", "--name-only", "--diff-filter=U").stdout.isEmpty, "no conflicted file")
        #expect(try world.record("a", "r1")?["text"] == "second server change", "the newer server copy")
        #expect(try world.record("a", "r4")?["done"] == true, "a's pushed edit stays")
        let queries = try JSONParser.parse(Array(try world.directory.read("a/store/queries.json").utf8))
        let bQueries = try JSONParser.parse(Array(try world.directory.read("b/store/queries.json").utf8))
        #expect(try #require(queries["queries"]?["todo"]?["updatedAt"]?.stringValue) < (try #require(bQueries["queries"]?["todo"]?["updatedAt"]?.stringValue)),
                "the older watermark of the two")
        #expect(try await world.tablesync("a", "verify").status == 0)
        let merged = try await world.tablesyncJSON("a", "sync")
        #expect(merged["push"]?["applied"] == 0, "the merged copies are the server's: nothing to send: \(merged)")
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try world.records("a") == world.records("other"), "converged")
        try await world.git("a", "add", "-A")
        try await world.git("a", "commit", "-q", "-m", "merged and synced")

        // b rebases its own sync commit onto a's history: the driver settles the replay too.
        try world.edit("other", "r3", ["text": "changed before the rebase"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("b", "sync", "--commit").status == 0)
        try await world.git("b", "pull", "-q", "--rebase", world.path("a"), "main")
        #expect(try await world.tablesync("b", "verify").status == 0)
        #expect(try await world.tablesync("b", "sync").status == 0)
        #expect(try world.records("b") == world.records("other"), "converged after the rebase")

        // a reverts a sync commit that brought a server change: the old content is an edit, sent on the server's version.
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try world.edit("other", "r5", ["text": "a server change a will revert"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try await world.git("a", "revert", "--no-edit", "HEAD")
        #expect(try world.record("a", "r5")?["text"] == "item 5")
        #expect(try await world.tablesync("a", "verify").status == 0)
        let reverted = try await world.tablesyncJSON("a", "sync")
        #expect(reverted["push"]?["compared"]?["edited"] == 1, "\(reverted)")
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try world.record("other", "r5")?["text"] == "item 5", "the revert reached the server")
        #expect(try world.records("a") == world.records("other"), "converged after the revert")
        await world.stop()
    }

    @Test("both sides editing one property by hand: git stops, and status shows both sides")
    func realConflictIsReported() async throws {
        let world = try await World()
        try await world.seededRepository("a", count: 2)
        try await world.git(".", "clone", "-q", "a", "b")
        #expect(try await world.tablesync("b", "git-setup").status == 0)
        try world.edit("a", "r1", ["text": "a's words"])
        try await world.git("a", "commit", "-q", "-am", "a edits r1")
        try world.edit("b", "r1", ["text": "b's words", "done": true])
        try await world.git("b", "commit", "-q", "-am", "b edits r1")
        let pull = try await world.git("b", "pull", "-q", "--no-rebase", "--no-edit", world.path("a"), "main", mayFail: true)
        #expect(pull.status != 0, "a real conflict stops the merge")
        let status = try await world.tablesync("b", "status")
        #expect(status.status == 7)
        #expect(status.stdout.contains("tables/todo/r1.json"), "\(status.stdout)")
        #expect(status.stdout.contains("ours has \"text\": \"b's words\", and theirs has \"text\": \"a's words\","), "\(status.stdout)")
        let merged = try world.directory.read("b/store/tables/todo/r1.json")
        #expect(merged.contains("\"done\": true"), "b's other edit is merged, outside the markers")
        await world.stop()
    }

    @Test("sync --commit commits the store's own files only, and only after a sync that changed them")
    func commitAfterSync() async throws {
        let world = try await World()
        try await world.seededRepository("a", count: 1)
        try world.directory.write("a/notes.txt", "not the store's\n")
        try await world.git("a", "add", "notes.txt")
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        #expect(try await world.git("a", "rev-list", "--count", "HEAD").stdout.hasPrefix("1"), "nothing changed: no commit")
        try world.edit("a", "r1", ["text": "edited"])
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        let log = try await world.git("a", "log", "-1", "--format=%s")
        #expect(log.stdout.hasPrefix("tablesync sync: pushed 1, pulled 0"), "\(log.stdout)")
        #expect(try await world.git("a", "diff", "--cached", "--name-only").stdout.contains("notes.txt"), "still staged, not committed")
        #expect(try await world.git("a", "show", "--name-only", "--format=", "HEAD").stdout.contains("store/tables/todo/r1.json"))

        // A store without queries pushes, and says that it has nothing to pull.
        try FileManager.default.createDirectory(atPath: world.path("c"), withIntermediateDirectories: true)
        #expect(try await world.tablesync("c", "init", "--remote", world.server.baseURL, "--table", "todo", "--no-default-queries").status == 0)
        let nothing = try await world.tablesync("c", "sync")
        #expect(nothing.status == 0)
        #expect(nothing.stderr.contains("nothing to pull: queries.json has no query"), "\(nothing.stderr)")
        await world.stop()
    }
}
