import Foundation
import SyncProtocol
import Synchronization
import Testing
import TestSupport

@testable import TableSync
@testable import TableSyncStorage

/// The rules `watch` decides by, alone: when a burst is pushed, how long it backs off, what a trigger asks for,
/// which tables a feed answer names, which file names wake it, and the file events of a real directory.
@Suite("watch rules")
struct WatchRuleTests {
    @Test("a burst is pushed a settle after its latest change, never later than the maximum delay after its first")
    func pushTime() {
        let timing = WatchTiming(settle: 0.1, maximumDelay: 0.5)
        let start = ContinuousClock.now
        #expect(timing.pushTime(firstChange: start, latestChange: start) == start + .milliseconds(100))
        #expect(
            timing.pushTime(firstChange: start, latestChange: start + .milliseconds(300))
                == start + .milliseconds(400))
        #expect(
            timing.pushTime(firstChange: start, latestChange: start + .milliseconds(450))
                == start + .milliseconds(500), "a store that keeps changing is pushed anyway")
    }

    @Test(
        "the backoff doubles from the first wait to the cap, each wait in the upper half of its ceiling",
        arguments: [(1, 1.0), (2, 2.0), (3, 4.0), (6, 32.0), (7, 60.0), (40, 60.0)])
    func backoff(failures: Int, ceiling: Double) {
        let timing = WatchTiming(firstBackoff: 1, maximumBackoff: 60)
        #expect(timing.backoff(afterFailures: failures, random: 0) == ceiling / 2)
        #expect(timing.backoff(afterFailures: failures, random: 0.999_999) <= ceiling)
        #expect(timing.backoff(afterFailures: failures, random: 0.999_999) > ceiling * 0.99)
    }

    @Test("triggers gather into what the next run does")
    func needs() {
        var needs = WatchNeeds()
        #expect(needs.isEmpty)
        needs.add(.files(.files(["todo": ["a.json"]])))
        #expect(needs == WatchNeeds(push: true, scanScope: .files(["todo": ["a.json"]])))
        #expect(needs.pushesOnly)
        needs.add(.serverChanged(["todo"]))
        needs.add(.serverChanged(["notes"]))
        #expect(!needs.pushesOnly)
        needs.add(.files(.files(["todo": ["b.json"], "notes": ["c.json"]])))
        #expect(
            needs
                == WatchNeeds(
                    push: true, pullTables: ["todo", "notes"],
                    scanScope: .files(["todo": ["a.json", "b.json"], "notes": ["c.json"]])))
        needs.add(.catchUp)
        #expect(needs.pullAll)
        needs.add(.stop)
        #expect(
            needs
                == WatchNeeds(
                    push: true, pullTables: ["todo", "notes"], pullAll: true,
                    scanScope: .files(["todo": ["a.json", "b.json"], "notes": ["c.json"]])))
        // A server change alone scans nothing; one scan of everything absorbs every name.
        var pull = WatchNeeds()
        pull.add(.serverChanged(["todo"]))
        #expect(pull.scanScope == .nothing && !pull.push)
        pull.add(.files(.nothing))
        #expect(pull.push && pull.scanScope == .nothing)
        needs.add(.files(.everything))
        #expect(needs.scanScope == .everything)
        needs.add(.files(.files(["todo": ["d.json"]])))
        #expect(needs.scanScope == .everything)
    }

    @Test("a feed answer names the tables whose mark moved, appeared or went")
    func tablesChanged() throws {
        let early = try #require(Timestamp(parsing: "2026-11-27T07:00:00.000Z"))
        let late = try #require(Timestamp(parsing: "2026-11-27T07:00:01.000Z"))
        let none: Timestamp? = nil
        let before = ChangeMarks(latest: ["todo": early, "notes": none, "tags": early])
        let after = ChangeMarks(latest: ["todo": late, "notes": early, "tags": early, "new": none])
        #expect(after.tablesChanged(since: before) == ["todo", "notes", "new"])
        #expect(before.tablesChanged(since: before).isEmpty)
    }

    @Test(
        "record files, the journal and the settings wake a push; swap files, temporary files and the cache do not",
        arguments: [
            ("r1.json", WatchedName.Directory.table, true), (".r1.json.swp", .table, false),
            ("r1.json.tmp", .table, false), ("4913", .table, false), ("r1.json~", .table, false),
            ("journal.jsonl", .root, true), ("sent.jsonl", .root, true), ("queries.json", .root, true),
            ("tablesync.json", .root, true), (".tablesync", .root, false), ("README.md", .root, false),
            ("todo", .tables, false)
        ])
    func watchedNames(name: String, directory: WatchedName.Directory, matters: Bool) {
        #expect(WatchedName.matters(name, in: directory) == matters)
    }

    @Test(
        """
        a command waits for a lock a watch's run holds, blocking or suspended, and fails at once on a lock anything \
        else holds
        """,
        arguments: [false, true])
    func lockSharedWithAWatch(suspending: Bool) async throws {
        let (directory, context) = try makeStore()
        let layout = context.layout
        await context.close()
        let watchRun = try StoreLock.acquire(layout: layout, purpose: StoreLock.watchPurpose)
        let began = Mutex(false)
        let waiting = Task.detached {
            let purpose = "tablesync insert"
            let noteWait = { began.withLock { $0 = true } }
            let lock =
                suspending
                ? try await StoreLock.acquireWaiting(layout: layout, purpose: purpose, whenWaiting: noteWait)
                : try StoreLock.acquire(layout: layout, purpose: purpose, whenWaiting: noteWait)
            return (lock, ContinuousClock.now)
        }
        // Released only once the other run is known to wait, so the wait itself is what is tested.
        try await Self.waitFor("the second run to wait for the lock") { began.withLock { $0 } }
        let released = ContinuousClock.now
        flock(watchRun.descriptor, LOCK_UN) // the watch's run ends
        let (waited, acquired) = try await waiting.value
        // Ordered by the clock, not by a duration: a loaded machine may run the waiting task late.
        #expect(acquired >= released, "it had the lock only once the watch's run ended")
        #expect(throws: StoreLockError.self, "a lock held by another command fails at once") {
            try StoreLock.acquire(layout: layout, purpose: "tablesync sync")
        }
        await #expect(throws: StoreLockError.self, "a lock held by another command fails at once, suspending too") {
            try await StoreLock.acquireWaiting(layout: layout, purpose: "tablesync sync")
        }
        #expect(throws: StoreLockError.self, "a watch never waits") {
            try StoreLock.acquire(layout: layout, purpose: StoreLock.watchPurpose)
        }
        withExtendedLifetime((watchRun, waited)) {}
        _ = directory
    }

    @Test("a watch ends on stop() and on its task's cancellation, with a stopped event, its server away")
    func stopsAndCancels() async throws {
        let (directory, context) = try makeStore()
        let root = context.layout.root
        await context.close()
        let options = SyncOptions(timeout: 1, retryPolicy: RetryPolicy(maximumAttempts: 1))
        for cancelling in [false, true] {
            let events = EventLog()
            let watcher = StoreWatcher(directory: root, options: options)
            let watching = Task { try await watcher.run { events.append($0) } }
            try await Self.waitFor("the watch's started event") { events.names.contains("started") }
            if cancelling { watching.cancel() } else { watcher.stop() }
            // Far beyond what a stop takes (well under a second alone): in the whole suite, other tests' durable
            // writes hold this process's few shared threads in syncfs for seconds at a time.
            let ended = Task {
                try await Task.sleep(for: .seconds(60))
                Issue.record("the watch did not end within 60 s (cancelling: \(cancelling)): \(events.names)")
                watching.cancel()
            }
            try await watching.value
            ended.cancel()
            #expect(events.names.first == "started" && events.names.last == "stopped", "\(events.names)")
        }
        _ = directory
    }

    #if canImport(Glibc)
    @Test("inotify's events are read from their bytes: header, name and its padding")
    func parseEvents() {
        var bytes: [UInt8] = []
        func append(watch: Int32, mask: UInt32, name: String, padded: Int) {
            for word in [UInt32(bitPattern: watch), mask, 0, UInt32(padded)] {
                withUnsafeBytes(of: word.littleEndian) { bytes += $0 }
            }
            bytes += Array(name.utf8) + Array(repeating: 0, count: padded - name.utf8.count)
        }
        append(watch: 1, mask: UInt32(IN_CLOSE_WRITE), name: "r1.json", padded: 16)
        append(watch: 2, mask: UInt32(IN_Q_OVERFLOW), name: "", padded: 0)
        #expect(
            InotifyEvent.parse(bytes[...]) == [
                InotifyEvent(watch: 1, mask: UInt32(IN_CLOSE_WRITE), name: "r1.json"),
                InotifyEvent(watch: 2, mask: UInt32(IN_Q_OVERFLOW), name: "")
            ])
    }

    @Test("file events name the record files written, renamed into place or removed; a directory made again, all")
    func fileEventsOfAStore() async throws {
        let (directory, context) = try makeStore()
        let layout = context.layout
        let seen = Mutex<[ScanScope]>([])
        let events = try #require(
            FileEvents(layout: layout, tables: ["todo"]) { scope in seen.withLock { $0.append(scope) } })
        defer { events.stop() }
        let table = layout.tableDirectory("todo")
        /// Everything the events named since `start`.
        func named(from start: Int) -> ScanScope? {
            seen.withLock { $0.dropFirst(start).reduce(nil) { $0?.adding($1) ?? $1 } }
        }
        var count: Int { seen.withLock(\.count) }

        /// Whether the events since `start` reached the file `name`: named, or within everything.
        func reached(_ name: String, from start: Int) -> Bool {
            named(from: start).map { $0.names(in: "todo")?.contains(name) ?? true } ?? false
        }

        /// Writes files in the directory made again until an event names one of them: the directory is watched
        /// again. Its own events, queued before the files', may come in one batch with the first file's and make it
        /// everything; a later file's event then comes alone. A file is added each second one is not named, so the
        /// time never decides the outcome.
        func expectWatchedAgain(_ prefix: String) async throws {
            let before = count
            var written: Set<String> = []
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let name = "\(prefix)-\(written.count).json"
                try #"{"id": "x"}"#.write(toFile: table + "/" + name, atomically: false, encoding: .utf8)
                written.insert(name)
                for _ in 0..<100 {
                    let named = seen.withLock { scopes in
                        scopes.dropFirst(before).contains { !($0.names(in: "todo") ?? []).isDisjoint(with: written) }
                    }
                    if named { return }
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            Issue.record("no event named a file written in the directory made again within 60 s: \(written.sorted())")
        }

        // An editor's swap file is no change: the record file's event, queued after it, comes alone.
        try "swap".write(toFile: table + "/.r1.json.swp", atomically: false, encoding: .utf8)
        try #"{"id": "r1"}"#.write(toFile: table + "/r1.json", atomically: false, encoding: .utf8)
        try await Self.waitFor { reached("r1.json", from: 0) }
        #expect(seen.withLock { $0 } == [.files(["todo": ["r1.json"]])])
        let afterWrite = count
        try #"{"id": "r2"}"#.write(toFile: table + "/r2.json.tmp", atomically: false, encoding: .utf8)
        try FileManager.default.moveItem(atPath: table + "/r2.json.tmp", toPath: table + "/r2.json")
        try await Self.waitFor { named(from: afterWrite) == .files(["todo": ["r2.json"]]) }
        let afterRename = count
        try FileManager.default.removeItem(atPath: table + "/r1.json")
        try await Self.waitFor { named(from: afterRename) == .files(["todo": ["r1.json"]]) }
        // The journal changes no record file: a push, with nothing to scan.
        let beforeJournal = count
        try "".write(toFile: layout.root + "/" + StoreLayout.journalFileName, atomically: false, encoding: .utf8)
        try await Self.waitFor { named(from: beforeJournal) == .nothing }
        // The table directory made again (a checkout that removed it) is watched again, and anything may have
        // changed in it.
        let beforeRemake = count
        try FileManager.default.removeItem(atPath: table)
        try FileManager.default.createDirectory(atPath: table, withIntermediateDirectories: false)
        try await Self.waitFor { named(from: beforeRemake) == .everything }
        try await expectWatchedAgain("r3")
        // So is `tables/` itself made again, and the table's directory in it.
        let beforeTables = count
        try FileManager.default.removeItem(atPath: layout.tablesDirectory)
        try FileManager.default.createDirectory(atPath: table, withIntermediateDirectories: true)
        try await Self.waitFor { named(from: beforeTables) == .everything }
        try await expectWatchedAgain("r4")
        _ = directory
    }
    #endif

    /// Polls `condition` every 10 ms until it holds; records an issue naming `what` after 60 s, far beyond what
    /// an event takes alone: in the whole suite on a loaded machine, other tests' durable writes hold this process's
    /// few shared threads for seconds at a time.
    private static func waitFor(
        _ what: String = "a file event", sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("waited 60 s for \(what)", sourceLocation: sourceLocation)
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// The names of the events a watch told, in order.
private final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [String] = []

    func append(_ event: WatchEvent) {
        let name = String(describing: event).prefix { $0 != "(" }
        lock.withLock { events.append(String(name)) }
    }

    var names: [String] { lock.withLock { events } }
}
