import Foundation
import Testing
import TestSupport
import TableSync

/// The main example of each article of the DocC catalogue (Sources/TableSync/TableSync.docc), run against a real
/// store and a live server. Only the public API is imported, as an app sees it.
@Suite("Documentation examples")
struct DocumentationExamplesTests {
    let options = SyncOptions(retryPolicy: RetryPolicy(maximumAttempts: 1))

    // MARK: - README.md

    @Test("the README's library example compiles and runs: ReadmeLibraryExample.swift is its block, as printed")
    func readmeLibraryExample() async throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let readme = try String(
            contentsOf: tests.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                "README.md"), encoding: .utf8)
        let afterHeading = try #require(readme.range(of: "## Library\n\n```swift\n"))
        let blockEnd = try #require(readme.range(of: "```\n", range: afterHeading.upperBound..<readme.endIndex))
        let printed = String(readme[afterHeading.upperBound..<blockEnd.lowerBound])
        let compiled = try String(
            contentsOf: tests.appendingPathComponent("ReadmeLibraryExample.swift"), encoding: .utf8)
        let held = try #require(compiled.range(of: "import Foundation"))
        #expect(
            String(compiled[held.lowerBound...]) == printed, "README.md's library example and the test's copy differ")

        let server = try await LiveServer.start(.sqlite, tables: ["TodoItem"])
        defer { TestBackend.removeFiles(of: server.database) }
        let directory = TemporaryDirectory()
        _ = try SyncContext.initialize(
            directory: directory.file("store"), settings: StoreSettings(remote: server.baseURL, tables: ["TodoItem"]),
            queryPerTable: true)
        let open = try await addItem("Buy milk", toStore: directory.file("store"))
        #expect(open.map(\.text) == ["Buy milk"])
        let queries = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: directory.file("store/queries.json"))))
        let ids = ((queries as? [String: Any])?["queries"] as? [String: Any]).map { Array($0.keys) }
        #expect(ids == ["TodoItem"], "the pull adds no second query: \(queries)")
        let context = try SyncContext(directory: directory.file("store"), mode: .readOnly)
        #expect(try await context.status().pending.isEmpty, "the item reached the server")
        await server.stop()
    }

    // MARK: - Conflicts.md

    /// The article's loop: keep the local side where the server has the record, take the server's delete.
    static func settleConflicts(_ context: SyncContext) async throws {
        for conflict in try await context.conflicts() {
            guard let server = conflict.server else { continue }
            let deletedOnServer = server["deleted"]?.boolValue == true
            try await context.resolve(conflict.key, deletedOnServer ? .takeServer : .keepLocal)
        }
    }

    @Test("Conflicts: a stale update and an edit of a record deleted on the server wait in conflicts/ until resolved")
    func conflicts() async throws {
        let server = try await LiveServer.start(.sqlite, tables: ["todo"])
        defer { TestBackend.removeFiles(of: server.database) }
        let directory = TemporaryDirectory()
        let settings = StoreSettings(remote: server.baseURL, tables: ["todo"])
        let phone = try SyncContext.initialize(
            directory: directory.file("phone"), settings: settings,
            queryPerTable: true)
        let laptop = try SyncContext.initialize(
            directory: directory.file("laptop"), settings: settings,
            queryPerTable: true)
        let phoneTodo = try await phone.table("todo")
        let laptopTodo = try await laptop.table("todo")
        try await phoneTodo.insert(["id": "a1", "text": "Buy milk"])
        try await phoneTodo.insert(["id": "b2", "text": "Walk the dog"])
        _ = try await phone.sync(options: options)
        _ = try await laptop.sync(options: options)

        try await laptopTodo.update(["id": "a1", "text": "Buy oat milk"])
        try await laptopTodo.delete(id: "b2")
        #expect(try await laptop.push(options: options).applied == 2)
        try await phoneTodo.update(["id": "a1", "text": "Buy milk and eggs"])
        try await phoneTodo.update(["id": "b2", "text": "Walk the dog twice"])
        let refused = try await phone.push(options: options)
        #expect(refused.applied == 0)
        #expect(refused.conflicts == [RecordKey(table: "todo", id: "a1"), RecordKey(table: "todo", id: "b2")])

        let waiting = try await phone.conflicts()
        #expect(waiting.map(\.status) == [412, 410])
        #expect(waiting.first?.local?["text"]?.stringValue == "Buy milk and eggs")
        #expect(waiting.first?.server?["text"]?.stringValue == "Buy oat milk")
        #expect(FileManager.default.fileExists(atPath: directory.file("phone/conflicts/todo/a1.json")))
        #expect(try await phone.push(options: options).waiting.count == 2, "not sent again while its conflict waits")

        try await Self.settleConflicts(phone)
        #expect(try await phone.conflicts().isEmpty)
        #expect(try await phone.push(options: options).applied == 1, "the kept update goes out on the server's version")
        #expect(try await phoneTodo.read(id: "b2") == nil, "the server's delete was taken")
        _ = try await laptop.sync(options: options)
        #expect(try await laptopTodo.read(id: "a1")?["text"]?.stringValue == "Buy milk and eggs")

        await server.stop()
    }

    @Test("Conflicts: resolving a record without a conflict is a usage error")
    func resolveWithoutConflict() async throws {
        let directory = TemporaryDirectory()
        let settings = StoreSettings(remote: "http://127.0.0.1:9", tables: ["todo"])
        let context = try SyncContext.initialize(directory: directory.file("store"), settings: settings)
        let error = await #expect(throws: StoreError.self) {
            try await context.resolve(RecordKey(table: "todo", id: "a1"), .keepLocal)
        }
        #expect(error?.kind == .usage)
    }

    // MARK: - RunningFromCron.md

    /// What one scheduled run of a program that embeds TableSync makes of the outcome.
    enum RunOutcome: Equatable {
        case done, conflictsWaiting, retryLater, needsAPerson
    }

    /// The article's scheduled run.
    static func scheduledSync(store: String, options: SyncOptions = SyncOptions()) async -> RunOutcome {
        do {
            let context = try await SyncContext.open(directory: store, purpose: "notes-app scheduled sync")
            let report = try await context.sync(options: options)
            if !report.push.problems.isEmpty { return .needsAPerson }
            if !(report.push.conflicts.isEmpty && report.push.rejected.isEmpty && report.push.waiting.isEmpty) {
                return .conflictsWaiting
            }
            return .done
        } catch let error as CategorizedError {
            switch error.kind {
            case .locked, .unreachable: return .retryLater
            case .usage, .invalidStore, .authentication, .gitState, .other: return .needsAPerson
            }
        } catch {
            return .needsAPerson
        }
    }

    @Test("Running from cron: the lock, exit codes, --json, and the same outcomes from the library")
    func runningFromCron() async throws {
        let server = try await LiveServer.start(.sqlite, tables: ["notes"])
        defer { TestBackend.removeFiles(of: server.database) }
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        let tablesync = builtProduct("tablesync")
        func run(_ arguments: String...) async throws -> (status: Int32, stdout: String, stderr: String, killed: Bool) {
            try await runProgram(tablesync, arguments)
        }
        #expect(try await run("-C", store, "init", "--remote", server.baseURL, "--table", "notes").status == 0)

        // Another run holds the lock: the second exits 6 at once, its error as JSON on standard output.
        let holder = try SyncContext(directory: store, purpose: "a long sync")
        let locked = try await run("-C", store, "sync", "--json")
        #expect(locked.status == 6)
        #expect(locked.stdout.contains("\"exitCode\": 6") && locked.stdout.contains("a long sync"), "\(locked.stdout)")
        #expect(await Self.scheduledSync(store: store, options: options) == .retryLater)
        await holder.close()

        #expect(try await run("-C", store, "insert", "notes", #"{"id": "n1", "text": "hello"}"#).status == 0)
        let synced = try await run("-C", store, "sync", "--json", "--quiet")
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stdout.contains("\"applied\": 1"), "\(synced.stdout)")
        #expect(await Self.scheduledSync(store: store, options: options) == .done)

        // --verbose logs each request on standard error; standard output keeps the one JSON document.
        let verbose = try await run("-C", store, "sync", "--json", "--verbose")
        #expect(verbose.status == 0 && verbose.stderr.contains("request"), "\(verbose.stderr)")
        #expect(verbose.stdout.hasPrefix("{"), "\(verbose.stdout)")

        // A server that cannot be reached: exit 4, nothing lost.
        let away = directory.file("away")
        #expect(try await run("-C", away, "init", "--remote", "http://127.0.0.1:9", "--table", "notes").status == 0)
        #expect(try await run("-C", away, "insert", "notes", #"{"id": "n2"}"#).status == 0)
        let unreachable = try await run("-C", away, "sync", "--attempts", "1", "--quiet")
        #expect(unreachable.status == 4, "\(unreachable.stderr)")
        #expect(await Self.scheduledSync(store: away, options: options) == .retryLater)
        let status = try await run("-C", away, "status", "--json")
        #expect(status.stdout.contains("\"n2\""), "the insert is still pending: \(status.stdout)")

        await server.stop()
    }

    // MARK: - StoresInGit.md

    /// A git environment of the test's own: an identity, no user or system config.
    static func gitEnvironment(home: String) -> [String: String] {
        var environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": home,
            "GIT_CONFIG_NOSYSTEM": "1"
        ]
        for role in ["AUTHOR", "COMMITTER"] {
            environment["GIT_\(role)_NAME"] = "TableSync docs"
            environment["GIT_\(role)_EMAIL"] = "docs@tablesync.invalid"
        }
        return environment
    }

    @Test("Stores in git: init in a repository, sync --commit, a clone's git-setup and first sync, a merge refused")
    func storesInGit() async throws {
        let server = try await LiveServer.start(.sqlite, tables: ["todo"])
        defer { TestBackend.removeFiles(of: server.database) }
        let directory = TemporaryDirectory()
        let environment = Self.gitEnvironment(home: directory.path)
        typealias Run = (status: Int32, stdout: String, stderr: String)
        func run(_ program: String, _ arguments: [String]) async throws -> Run {
            let result = try await runProgram(program, arguments, environment: environment)
            return (result.status, result.stdout, result.stderr)
        }
        func git(_ repository: String, _ arguments: String...) async throws -> Run {
            try await run("/usr/bin/env", ["git", "-C", directory.file(repository)] + arguments)
        }
        func tablesync(_ store: String, _ arguments: String...) async throws -> Run {
            try await run(builtProduct("tablesync"), ["-C", store] + arguments)
        }
        let team = directory.file("team-todo")
        let store = team + "/store"
        try FileManager.default.createDirectory(atPath: team, withIntermediateDirectories: true)
        #expect(try await git("team-todo", "init", "-q", "-b", "main").status == 0)
        #expect(try await tablesync(store, "init", "--remote", server.baseURL, "--table", "todo").status == 0)
        #expect(try await git("team-todo", "config", "merge.tablesync.driver").stdout.contains("merge-file"))
        #expect(try await tablesync(store, "insert", "todo", #"{"id": "r1", "text": "Buy milk"}"#).status == 0)
        let first = try await tablesync(store, "sync", "--commit", "--quiet")
        #expect(first.status == 0, "\(first.stderr)")
        let subject = try await git("team-todo", "log", "-1", "--format=%s").stdout
        #expect(subject.hasPrefix("tablesync sync: pushed 1, pulled 0"), "\(subject)")
        let tracked = try await git("team-todo", "ls-files").stdout
        #expect(tracked.contains("store/tables/todo/r1.json") && tracked.contains("store/.gitattributes"))
        #expect(!tracked.contains(".tablesync/"), "the cache stays out of git: \(tracked)")

        // Another clone: git-setup once, then its first sync sends nothing for the server's copies it got from git.
        #expect(try await run("/usr/bin/env", ["git", "clone", "-q", team, directory.file("clone")]).status == 0)
        let clone = directory.file("clone/store")
        #expect(try await tablesync(clone, "status").stdout.contains("git-setup"))
        #expect(try await tablesync(clone, "git-setup").status == 0)
        let cloneSync = try await tablesync(clone, "sync", "--json", "--quiet")
        #expect(cloneSync.status == 0 && cloneSync.stdout.contains("\"indexedCopies\": 1"), "\(cloneSync.stdout)")

        // A merge stopped at a conflict (here in a file beside the store): push, pull and sync refuse, exit 9.
        try "one\n".write(toFile: team + "/notes.txt", atomically: true, encoding: .utf8)
        _ = try await git("team-todo", "add", "notes.txt")
        _ = try await git("team-todo", "commit", "-q", "-m", "notes")
        _ = try await git("team-todo", "switch", "-q", "-c", "other")
        try "two\n".write(toFile: team + "/notes.txt", atomically: true, encoding: .utf8)
        _ = try await git("team-todo", "commit", "-q", "-a", "-m", "two")
        _ = try await git("team-todo", "switch", "-q", "main")
        try "three\n".write(toFile: team + "/notes.txt", atomically: true, encoding: .utf8)
        _ = try await git("team-todo", "commit", "-q", "-a", "-m", "three")
        #expect(try await git("team-todo", "merge", "-q", "other").status != 0)
        let refused = try await tablesync(store, "sync", "--quiet")
        #expect(refused.status == 9 && refused.stderr.contains("a git merge is under way"), "\(refused.stderr)")
        let context = try SyncContext(directory: store)
        let error = await #expect(throws: (any Error).self) { try await context.sync(options: options) }
        #expect((error as? CategorizedError)?.kind == .gitState)
        await context.close()
        _ = try await git("team-todo", "merge", "--abort")
        #expect(try await tablesync(store, "sync", "--quiet").status == 0)

        await server.stop()
    }

    // MARK: - TypedTables.md

    struct Note: Codable, Sendable, Equatable {
        /// `nil` until inserted: the store then gives the note a new id.
        var id: String?
        var title: String
        var isDone: Bool
        /// The server's version and time of the last change: read, never sent.
        var version: String?
        var updatedAt: Date?

        enum CodingKeys: String, CodingKey {
            case id, title
            case isDone = "done"
            case version, updatedAt
        }
    }

    @Test("Typed tables: ids, version and updatedAt map to the model; a record that does not decode names itself")
    func typedTables() async throws {
        let server = try await LiveServer.start(.sqlite, tables: ["notes"])
        defer { TestBackend.removeFiles(of: server.database) }
        let directory = TemporaryDirectory()
        let context = try SyncContext.initialize(
            directory: directory.file("store"),
            settings: StoreSettings(remote: server.baseURL, tables: ["notes"]))

        // The article's example.
        let notes = try await context.table("notes", as: Note.self)
        let inserted = try await notes.insert(Note(id: nil, title: "Call the plumber", isDone: false))
        try await context.push(options: options)

        if let id = inserted.id, var note = try await notes.read(id: id) {
            #expect(note.version != nil && note.updatedAt != nil, "the server's version and updatedAt")
            note.isDone = true
            note.version = "not sent"
            try await notes.update(note)
        }
        let open = try await notes.query(try LocalQuery(filter: "done eq false", orderBy: "title"))

        #expect(open.isEmpty)
        let id = try #require(inserted.id)
        #expect(id == id.lowercased() && UUID(uuidString: id) != nil, "a new lowercase UUID")
        #expect(inserted.version == nil && inserted.updatedAt == nil, "nil until a push writes the server's copy back")
        let file = try String(contentsOfFile: directory.file("store/tables/notes/\(id).json"), encoding: .utf8)
        #expect(file.contains("\"done\": true") && !file.contains("not sent"), "\(file)")
        #expect(await context.pendingOperations.map(\.kind) == [.update])

        // A property the model does not declare is not kept by a typed update.
        let untyped = try await context.table("notes")
        var record = try #require(try await untyped.read(id: id))
        record["priority"] = 2
        try await untyped.update(record)
        var note = try #require(try await notes.read(id: id))
        note.title = "Call the plumber today"
        try await notes.update(note)
        #expect(try await untyped.read(id: id)?["priority"] == nil)

        // A record that does not decode as the model: ModelCodingError names it.
        try await untyped.insert(["id": "odd", "title": "Odd", "done": "yes"])
        let error = await #expect(throws: ModelCodingError.self) { try await notes.query() }
        let message = error.map(String.init(describing:)) ?? ""
        #expect(message.hasPrefix("record notes/odd does not decode as Note"), "\(message)")
        #expect(error?.kind == .other)

        await server.stop()
    }
}
