import Foundation
import Synchronization
import SyncProtocol
import Testing
import TestSupport

@testable import TableSync

/// `tablesync watch` as people run it: real `tablesync` processes watching stores on disk, a live server over
/// loopback, files written the way editors and scripts write them. Each test names the behaviour it stands for.
@Suite("tablesync watch")
struct WatchTests {
    /// Stands for two people with a store each, both watching: what one writes by hand, or with `tablesync insert`
    /// while the watch runs, shows up in the other's files.
    @Test("a hand edit and an insert in one watched store appear in the other; SIGTERM stops both, exit 0")
    func editsTravelBetweenWatchers() async throws {
        let world = try await WatchWorld(stores: ["a", "b"], records: 3)
        let (a, b) = try await world.watchBoth()

        try world.edit("a", "r1", text: "edited by hand in a")
        try await world.waitUntil("a's edit is in b's file") { try world.text("b", "r1") == "edited by hand in a" }
        // An editor that writes a temporary file and renames it over the record.
        try world.directory.write("b/tables/todo/.r2.json.swp", "not a record")
        var record = try #require(try world.record("b", "r2"))
        record["text"] = "renamed into place in b"
        try world.directory.write("b/tables/todo/r2.json.tmp", CanonicalJSON.string(.object(record)))
        #expect(rename(world.path("b/tables/todo/r2.json.tmp"), world.path("b/tables/todo/r2.json")) == 0)
        try await world.waitUntil("b's renamed edit is in a's file") {
            try world.text("a", "r2") == "renamed into place in b"
        }
        let insert = try await world.tablesync(
            "b", "insert", "todo", #"{"id": "n1", "text": "inserted while b watches"}"#)
        #expect(insert.status == 0, "\(insert.stderr)")
        try await world.waitUntil("the insert is in a's files") {
            try world.text("a", "n1") == "inserted while b watches"
        }
        try FileManager.default.removeItem(atPath: world.path("a/tables/todo/r3.json"))
        try await world.waitUntil("a's delete reached b") { try world.record("b", "r3") == nil }
        #expect(try await world.serverRows()["r3"]?["deleted"] == true)

        #expect(try await a.stop() == 0)
        #expect(try await b.stop() == 0)
        #expect(a.events().last?["event"] == "stopped")
        #expect(try await world.status("a").contains("Nothing to push"))
    }

    /// Stands for a laptop whose server goes away (a restart, a dropped network): edits made meanwhile go out once
    /// it is back, and the other watcher, whose feed was lost too, catches up.
    @Test("an edit made while the server is down arrives in the other store after the server returns")
    func editWhileServerIsDown() async throws {
        let world = try await WatchWorld(stores: ["a", "b"], records: 2)
        let (a, b) = try await world.watchBoth("--attempts", "1")
        await world.server.stop()

        try world.edit("a", "r1", text: "written while the server was down")
        try await world.waitUntil("a's run failed") { a.events().contains { $0["event"] == "failed" } }
        // The server stays away until b has noticed: on a loaded machine b's next feed request could otherwise come
        // only after the restart, and b would never learn that its feed was lost.
        try await world.waitUntil("b's feed was lost") { b.events().contains { $0["event"] == "feedLost" } }
        try await world.restartServer()
        try await world.waitUntil("the edit reached b after the server came back", seconds: 90) {
            try world.text("b", "r1") == "written while the server was down"
        }
        #expect(try await a.stop() == 0)
        #expect(try await b.stop() == 0)
        let pushed = a.events().compactMap { $0["push"]?["applied"]?.integerValue }.reduce(0, +)
        #expect(pushed == 1, "the edit was sent once")
    }

    /// Stands for a laptop that sleeps (SIGSTOP, as a suspend stops the process) longer than the server's change-feed
    /// wait while the other side changes: on waking, the watch learns of the change and pulls it.
    @Test("a watch stopped longer than the feed's wait (a laptop asleep) pulls what changed when it wakes")
    func sleepingWatchCatchesUp() async throws {
        let world = try await WatchWorld(stores: ["a", "b"], records: 2, maxChangeWait: 2)
        let (a, b) = try await world.watchBoth()
        b.suspend()
        try world.edit("a", "r1", text: "written while b slept")
        try await world.waitUntil("a pushed the edit") { a.events().contains { $0["push"] != nil } }
        // Time is the behaviour: asleep past the server's 2 s change-feed wait, by a second; a late wake only
        // lengthens the sleep.
        try await Task.sleep(for: .seconds(3))
        #expect(try world.text("b", "r1") == "item 1", "b did nothing while stopped")
        b.resume()
        try await world.waitUntil("b pulled the edit after waking") {
            try world.text("b", "r1") == "written while b slept"
        }
        #expect(try await a.stop() == 0)
        #expect(try await b.stop() == 0)
    }

    /// Stands for a `git checkout`, a `git merge` or an unpacked archive putting a thousand record files in place at
    /// once (git writes each file aside and renames it, as this test does).
    @Test("a burst of 1,000 file writes is pushed as a few batches and reaches the other store")
    func burstIsBatched() async throws {
        let world = try await WatchWorld(stores: ["a", "b"], records: 1)
        let (a, b) = try await world.watchBoth()
        for number in 1...1000 {
            try world.directory.write("staging/burst\(number).json", #"{"id": "burst\#(number)", "text": "burst"}"#)
        }
        for number in 1...1000 {
            let name = "burst\(number).json"
            #expect(rename(world.path("staging/" + name), world.path("a/tables/todo/" + name)) == 0)
        }
        try await world.waitUntil("b has all of the burst", seconds: 90) { try world.recordCount("b") == 1001 }
        #expect(try await a.stop() == 0)
        #expect(try await b.stop() == 0)
        let pushes = a.events().compactMap { $0["push"] }.filter { ($0["applied"]?.integerValue ?? 0) > 0 }
        let requests = pushes.compactMap { $0["requests"]?.integerValue }.reduce(0, +)
        #expect(pushes.compactMap { $0["applied"]?.integerValue }.reduce(0, +) == 1000)
        #expect(pushes.count <= 3, "runs that pushed: \(pushes.count)")
        #expect(requests <= 6, "push requests for 1,000 files: \(requests)")
        #expect(try await world.serverRows().count == 1001)
    }

    /// Stands for a watch killed by the OOM killer or a power cut in the middle of a push: nothing is lost, and the
    /// next `sync` (or `watch`) converges.
    @Test("kill -9 of a watch in the middle of a push loses nothing: the next sync converges")
    func killedWatchConverges() async throws {
        let world = try await WatchWorld(stores: ["a", "b"], records: 1)
        let (a, b) = try await world.watchBoth()
        for number in 1...600 {
            try world.directory.write("a/tables/todo/k\(number).json", #"{"id": "k\#(number)", "text": "kept"}"#)
        }
        // Killed once its push has begun: the server holds its first batch (500 operations at most), and the rest
        // of the 600 is in flight or still queued.
        try await world.waitUntil("a's push has begun") { try await world.serverRows().count > 1 }
        a.kill()
        let sync = try await world.tablesync("a", "sync")
        #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
        try await world.waitUntil("b has every record", seconds: 90) { try world.recordCount("b") == 601 }
        #expect(try await world.serverRows().count == 601)
        #expect(try await world.status("a").contains("Nothing to push"))
        #expect(try await b.stop() == 0)
    }

    /// Stands for two people editing the same record within the same second, each in a watched store.
    @Test("two watchers editing one record end in a conflict that status shows, as with sync")
    func concurrentEditsConflict() async throws {
        let world = try await WatchWorld(stores: ["a", "b"], records: 1)
        let (a, b) = try await world.watchBoth()
        try world.edit("a", "r1", text: "a's words")
        try world.edit("b", "r1", text: "b's words")
        try await world.waitUntil("one of them holds a conflict", seconds: 60) {
            world.directory.exists("a/conflicts/todo") || world.directory.exists("b/conflicts/todo")
        }
        #expect(try await a.stop() == 0)
        #expect(try await b.stop() == 0)
        let statuses = [try await world.status("a"), try await world.status("b")]
        #expect(statuses.contains { $0.contains("todo/r1") && $0.contains("onflict") }, "\(statuses)")
        let serverText = try await world.serverRows()["r1"]?["text"]?.stringValue
        #expect(serverText == "a's words" || serverText == "b's words")
    }

    /// Stands for a server without the change feed (Azure Mobile Apps, Datasync) and a store on a file system
    /// without inotify (NFS): the watch polls the server and scans the store at the intervals given.
    @Test("against a server without the change feed it polls; with --scan-interval it scans the store")
    func pollsWithoutFeed() async throws {
        let node = try await AzureNodeStandIn.start(tables: ["todo"])
        let world = try await WatchWorld(stores: ["a"], records: 0, remote: node.baseURL, apiVersion: 2)
        let a = try world.watch("a", "--poll-interval", "1", "--scan-interval", "0.3")
        try await a.waitForStart()
        let started = try #require(a.events().first)
        #expect(started["changeFeed"] == false)
        #expect(started["fileEvents"] == false)
        #expect(
            try await InteropTests.serverInsert(node.baseURL, ["id": "s1", "text": "from the server"]).status == 201)
        try await world.waitUntil("the server's insert was pulled") { try world.text("a", "s1") == "from the server" }
        try world.directory.write("a/tables/todo/h1.json", #"{"id": "h1", "text": "by hand"}"#)
        try await world.waitUntil("the hand-written file reached the server") {
            await node.record("h1", table: "todo")?["text"] == "by hand"
        }
        #expect(try await a.stop() == 0)
        await node.stop()
    }

    /// Stands for a second `tablesync watch` started by mistake (twice in a crontab's @reboot, two terminals).
    @Test("a second watch on the same store is refused at once with exit 6")
    func secondWatchRefused() async throws {
        let world = try await WatchWorld(stores: ["a"], records: 0)
        let a = try world.watch("a")
        try await a.waitForStart()
        let second = try await world.tablesync("a", "watch")
        #expect(second.status == 6)
        #expect(second.stderr.contains("tablesync watch"), "\(second.stderr)")
        #expect(try await a.stop() == 0)
    }

    /// Stands for `watch --commit` keeping a store in git: one commit for the changes of a quiet period, not one per
    /// change. The period is an hour, so that both edits fall within it however slow the machine; the commit due is
    /// made when the watch stops (`watchOfAReplacedStore` sees one made when a short period ends).
    @Test("watch --commit commits the changes of a quiet period once, with what was pushed and pulled")
    func commitsAfterQuietPeriod() async throws {
        let world = try await WatchWorld(stores: ["a"], records: 2, git: true)
        let a = try world.watch("a", "--commit", "--quiet-period", "3600")
        try await a.waitForStart()
        let before = try await world.git("a", "rev-list", "--count", "HEAD")
        func applied() -> Int64 { a.events().compactMap { $0["push"]?["applied"]?.integerValue }.reduce(0, +) }
        try world.edit("a", "r1", text: "first edit")
        try await world.waitUntil("the first edit was pushed") { applied() >= 1 }
        try world.edit("a", "r2", text: "second edit")
        try await world.waitUntil("the second edit was pushed") { applied() >= 2 }
        #expect(try await world.git("a", "rev-list", "--count", "HEAD") == before, "no commit within the period")
        #expect(try await a.stop() == 0)
        #expect(a.events().contains { $0["event"] == "committed" }, "the commit due was made as the watch stopped")
        let after = try await world.git("a", "rev-list", "--count", "HEAD")
        #expect(Int(after)! == Int(before)! + 1, "one commit for both edits")
        let subject = try await world.git("a", "log", "-1", "--format=%s")
        let status = try await world.status("a")
        #expect(subject.hasPrefix("tablesync watch: pushed 2"), "\(subject)\n\(a.transcript)\n\(status)")
        #expect(try await world.git("a", "status", "--porcelain").isEmpty, "\(status)")
    }

    /// Stands for a systemd `watch --commit` service still running while its store's clone is deleted and cloned
    /// again in place: its next run must not sync or commit the new clone (which may be in the middle of a merge).
    @Test("a watch whose store is removed and cloned again in place stops, exit 7, and touches nothing in the new one")
    func watchOfAReplacedStore() async throws {
        let world = try await WatchWorld(stores: ["a", "b"], records: 2, git: true)
        let a = try world.watch("a", "--commit", "--quiet-period", "0.2")
        try await a.waitForStart()
        // The watch is idle once it has pulled a change of the other store's: nothing of it runs during the re-clone.
        try world.edit("b", "r2", text: "before the re-clone")
        #expect(try await world.tablesync("b", "sync").status == 0)
        try await world.waitUntil("a pulled b's change") {
            try world.record("a", "r2")?["text"] == "before the re-clone"
        }
        try await world.waitUntil("a committed it") { a.events().contains { $0["event"] == "committed" } }
        try FileManager.default.moveItem(atPath: world.path("a"), toPath: world.path("a-old"))
        _ = try await world.git(".", "clone", "-q", world.path("a-old"), world.path("a"))
        let head = try await world.git("a", "rev-parse", "HEAD")
        try world.edit("a", "r1", text: "an edit in the new clone")
        // The next run is due when the server's change feed wakes the watch.
        try world.edit("b", "r2", text: "after the re-clone")
        #expect(try await world.tablesync("b", "sync").status == 0)
        #expect(try await a.waitForExit(seconds: 60) == 7, "\(a.transcript)")
        #expect(a.transcript.contains("was replaced"), "\(a.transcript)")
        #expect(try await world.git("a", "rev-parse", "HEAD") == head, "nothing committed in the new clone")
        #expect(try await world.serverRows()["r1"]?["text"] == "item 1", "nothing sent from it")
        #expect(try world.record("a", "r2")?["text"] == "before the re-clone", "nothing pulled into it")
    }
}

/// Stores under one temporary directory, the server they share, and `tablesync watch` processes on them.
final class WatchWorld: Sendable {
    let directory = TemporaryDirectory()
    private let serverBox: ServerBox
    let environment: [String: String]

    /// A live server serving `todo` with `records` records r1…, and a synced store for each of `stores` (inside a
    /// git repository with `git`); with `remote`, the stores use that server instead.
    init(
        stores: [String], records: Int, remote: String? = nil, apiVersion: Int? = nil, git: Bool = false,
        maxChangeWait: Int? = nil
    ) async throws {
        serverBox = ServerBox(
            try await LiveServer.start(.sqlite, tables: ["todo"]) { configuration in
                if let maxChangeWait { configuration.maxChangeWait = maxChangeWait }
            })
        environment = GitWorld.environment(home: directory.path)
        let remote = remote ?? server.baseURL
        for (index, store) in stores.enumerated() {
            if git {
                try FileManager.default.createDirectory(atPath: path(store), withIntermediateDirectories: true)
                _ = try await self.git(store, "init", "-q", "-b", "main")
            }
            var initArguments = ["init", "--remote", remote, "--table", "todo"]
            if let apiVersion { initArguments += ["--api-version", String(apiVersion)] }
            let initRun = try await tablesync(store, arguments: initArguments)
            #expect(initRun.status == 0, "\(initRun.stderr)")
            if index == 0 {
                for number in stride(from: 1, through: records, by: 1) {
                    try directory.write(
                        "\(store)/tables/todo/r\(number).json", #"{"id": "r\#(number)", "text": "item \#(number)"}"#)
                }
            }
            let sync = try await tablesync(store, arguments: git ? ["sync", "--commit"] : ["sync"])
            #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
        }
    }

    deinit {
        let box = serverBox
        Task { await box.server.stop() }
    }

    var server: LiveServer { serverBox.server }

    /// Starts the server again on its port and database, after ``LiveServer/stop()``.
    func restartServer() async throws {
        let old = server
        serverBox.server = try await LiveServer.start(.sqlite, tables: ["todo"], database: old.database, port: old.port)
    }

    func path(_ relative: String) -> String { directory.file(relative) }

    /// The watches started, whose events a failed wait shows.
    private let watches = Mutex<[(store: String, process: WatchProcess)]>([])

    /// Starts `tablesync -C <store> watch --json arguments`.
    func watch(_ store: String, _ arguments: String...) throws -> WatchProcess {
        try watch(store, arguments: arguments)
    }

    /// Starts `watch --json arguments` on stores `a` and `b`, and waits until both have started.
    func watchBoth(_ arguments: String...) async throws -> (WatchProcess, WatchProcess) {
        let watches = try ["a", "b"].map { try watch($0, arguments: arguments) }
        for watch in watches { try await watch.waitForStart() }
        return (watches[0], watches[1])
    }

    private func watch(_ store: String, arguments: [String]) throws -> WatchProcess {
        let process = try WatchProcess(
            arguments: ["-C", path(store), "watch", "--json"] + arguments, environment: environment,
            output: path("\(store)-watch-\(UUID().uuidString.prefix(8))"))
        watches.withLock { $0.append((store, process)) }
        return process
    }

    @discardableResult
    func tablesync(
        _ store: String, _ arguments: String...
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await tablesync(store, arguments: arguments)
    }

    func tablesync(_ store: String, arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String)
    {
        let run = try await runProgram(
            builtProduct("tablesync"), ["-C", path(store)] + arguments, environment: environment)
        return (run.status, run.stdout, run.stderr)
    }

    /// `git -C <directory> arguments`'s output, trimmed.
    func git(_ directory: String, _ arguments: String...) async throws -> String {
        let run = try await runProgram(
            "/usr/bin/env", ["git", "-C", path(directory)] + arguments, environment: environment)
        #expect(run.status == 0, "git \(arguments): \(run.stderr)")
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func status(_ store: String) async throws -> String {
        try await tablesync(store, "status").stdout
    }

    func record(_ store: String, _ id: String) throws -> [String: JSONValue]? {
        guard let bytes = FileManager.default.contents(atPath: path("\(store)/tables/todo/\(id).json")) else {
            return nil
        }
        return try? JSONParser.parse(Array(bytes)).objectValue
    }

    func text(_ store: String, _ id: String) throws -> String? {
        try record(store, id)?["text"]?.stringValue
    }

    func recordCount(_ store: String) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: path("\(store)/tables/todo")).filter {
            $0.hasSuffix(".json")
        }.count
    }

    /// Edits record `id`'s text by hand, as an editor that writes the file in place.
    func edit(_ store: String, _ id: String, text: String) throws {
        var record = try #require(try record(store, id))
        record["text"] = .string(text)
        try directory.write("\(store)/tables/todo/\(id).json", CanonicalJSON.string(.object(record)))
    }

    func serverRows() async throws -> [String: [String: JSONValue]] {
        try await Reliability.serverRows(server.baseURL, table: "todo")
    }

    func waitUntil(_ what: String, seconds: Double = 30, _ condition: () async throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while try await !condition() {
            guard Date() < deadline else {
                struct Timeout: Error, CustomStringConvertible { let description: String }
                let transcripts = watches.withLock { $0 }.map { "\n\($0.store): \($0.process.transcript)" }
                throw Timeout(description: "gave up waiting after \(seconds) s: \(what)\(transcripts.joined())")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// The server of a ``WatchWorld``, replaced when it restarts.
private final class ServerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var current: LiveServer

    init(_ server: LiveServer) { current = server }

    var server: LiveServer {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }
}

/// A running `tablesync watch`: its JSON events as they arrive, and its end.
final class WatchProcess: Sendable {
    private let process: Subprocess.Child
    private let output: String

    init(arguments: [String], environment: [String: String], output: String) throws {
        self.output = output
        process = try Subprocess.start(
            builtProduct("tablesync"), arguments, environment: environment, output: .file(output),
            errors: .file(output + ".err"))
    }

    deinit {
        process.terminate()
    }

    /// The events written so far, one JSON object per line.
    func events() -> [JSONValue] {
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONParser.parse(Array($0.utf8)) }
    }

    /// What it wrote on both outputs, for a failure's message.
    var transcript: String {
        ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "") + errors
    }

    /// What it wrote on standard error.
    var errors: String { (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? "" }

    /// Waits for the `started` event: from then on, every file written in the store is seen.
    func waitForStart(seconds: Double = 30) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !events().contains(where: { $0["event"] == "started" }) {
            guard process.isRunning else { throw WatchEnded(errors: errors) }
            guard Date() < deadline else { throw WatchEnded(errors: "no start after \(seconds) s: " + errors) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Sends SIGTERM and returns the exit status (it must end within 20 seconds).
    func stop() async throws -> Int32 {
        process.terminate()
        return try await waitForExit()
    }

    /// Stops it as a machine's suspend does (SIGSTOP).
    func suspend() {
        process.send(SIGSTOP)
    }

    /// Lets it run again (SIGCONT).
    func resume() {
        process.send(SIGCONT)
    }

    /// Sends SIGKILL.
    func kill() {
        process.send(SIGKILL)
    }

    /// Waits until it exits by itself or after a signal (within `seconds`), and returns its exit status.
    func waitForExit(seconds: Double = 20) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            guard Date() < deadline else { throw WatchEnded(errors: "still running \(seconds) s after SIGTERM") }
            try await Task.sleep(for: .milliseconds(20))
        }
        return process.waitUntilExit().status
    }

    struct WatchEnded: Error, CustomStringConvertible {
        let errors: String
        var description: String { "tablesync watch ended: \(errors)" }
    }
}
