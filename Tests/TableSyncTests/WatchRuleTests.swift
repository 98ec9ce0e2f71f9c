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

    @Test("a command waits for a lock a watch's run holds, and fails at once on a lock anything else holds")
    func lockSharedWithAWatch() async throws {
        let (directory, context) = try makeStore()
        let layout = context.layout
        await context.close()
        let watchRun = try StoreLock.acquire(layout: layout, purpose: StoreLock.watchPurpose)
        let waiting = Task.detached {
            let lock = try StoreLock.acquire(layout: layout, purpose: "tablesync insert")
            return (lock, ContinuousClock.now)
        }
        try await Task.sleep(for: .milliseconds(300))
        let released = ContinuousClock.now
        flock(watchRun.descriptor, LOCK_UN) // the watch's run ends
        let (waited, acquired) = try await waiting.value
        // Ordered by the clock, not by a duration: a loaded machine may start the waiting task late.
        #expect(acquired >= released, "it had the lock only once the watch's run ended")
        #expect(throws: StoreLockError.self, "a lock held by another command fails at once") {
            try StoreLock.acquire(layout: layout, purpose: "tablesync sync")
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
            try await Task.sleep(for: .milliseconds(300))
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

        try "swap".write(toFile: table + "/.r1.json.swp", atomically: false, encoding: .utf8)
        try await Task.sleep(for: .milliseconds(200))
        #expect(count == 0)

        try #"{"id": "r1"}"#.write(toFile: table + "/r1.json", atomically: false, encoding: .utf8)
        try await Self.waitFor { count >= 1 }
        #expect(named(from: 0) == .files(["todo": ["r1.json"]]))
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
        try await Task.sleep(for: .milliseconds(100))
        let afterRemake = count
        try #"{"id": "r3"}"#.write(toFile: table + "/r3.json", atomically: false, encoding: .utf8)
        try await Self.waitFor { named(from: afterRemake) == .files(["todo": ["r3.json"]]) }
        // So is `tables/` itself made again, and the table's directory in it.
        try FileManager.default.removeItem(atPath: layout.tablesDirectory)
        try FileManager.default.createDirectory(atPath: table, withIntermediateDirectories: true)
        try await Task.sleep(for: .milliseconds(100))
        let afterTables = count
        try #"{"id": "r4"}"#.write(toFile: table + "/r4.json", atomically: false, encoding: .utf8)
        try await Self.waitFor { named(from: afterTables) == .files(["todo": ["r4.json"]]) }
        _ = directory
    }

    private static func waitFor(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("no file event within 10 s")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
    #endif
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
