#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SyncProtocol
import TableSync
import TestSupport

/// W1–W3: live sync (`tablesync watch`) beside what it replaces, in the same run. W1, how long a hand edit in one
/// watched store takes to reach the file of another, against `tablesync push` then `tablesync sync` run at once;
/// W2, what an idle watch costs in requests and processor time, against an hour of a cron `sync` every five minutes;
/// W3, the server's memory with many watchers' change feed requests waiting, against the same server idle.
extension BenchmarkSuite {
    /// The table the watched stores hold (W1, W2), and the one the commands carry edits through (W1's baseline):
    /// apart, so that neither route's changes wake the other's stores.
    static let watchedTable = "live"
    static let commandTable = "cron"

    mutating func measureLiveSync() async throws {
        let count = configuration.smallRecords
        let database = work + "/live.sqlite"
        progress("W1, W2: seeding a server with two tables of \(count) records")
        try await ServerSeeder.seed(
            database: database, tables: [(Self.watchedTable, count), (Self.commandTable, count)], dataSet: dataSet)
        do {
            let server = try ServerProcess(
                executable: configuration.binaries + "/tablesync-server", database: "sqlite:" + database,
                tables: [Self.watchedTable, Self.commandTable], logFile: work + "/live-server.log",
                options: ["--max-change-wait", String(configuration.changeWait)])
            defer { server.stopWaiting() }
            let watched = (a: work + "/watched-a", b: work + "/watched-b")
            let commanded = (a: work + "/commanded-a", b: work + "/commanded-b")
            for (store, table) in [
                (watched.a, Self.watchedTable), (watched.b, Self.watchedTable), (commanded.a, Self.commandTable),
                (commanded.b, Self.commandTable)
            ] {
                progress("W1: pulling \(count) records of \(table) into \(store)")
                try freshStore(store, remote: server.baseURL, table: table)
                try expect(try tablesync(["-C", store, "pull", table, "--json"]), member: "written", equals: count)
            }
            try measureEditLatency(server: server, watched: watched, commanded: commanded)
            try measureIdleWatch(server: server, store: watched.a)
        }
        try measureFeedWaitMemory(database: database)
    }

    // MARK: - W1

    /// W1: `watchEdits` hand edits of a record file in store A, each timed from the start of its write until store
    /// B's copy of that file holds it, both stores watched; the baseline is the same edit carried by commands in
    /// another pair of stores (`tablesync push` in A, then `tablesync sync` in B, each started as soon as the one
    /// before ends), `watchCommandEdits` times, taking turns with the watches' edits.
    private mutating func measureEditLatency(
        server: ServerProcess, watched: (a: String, b: String), commanded: (a: String, b: String)
    ) throws {
        let count = configuration.smallRecords
        let edits = configuration.watchEdits
        let commandEdits = min(configuration.watchCommandEdits, edits)
        let executable = configuration.binaries + "/tablesync"
        let watches = try [watched.a, watched.b].map { try WatchProcess(executable: executable, store: $0) }
        for watch in watches { try watch.waitForStart() }
        // Both feeds wait on their first marks; the catch-up runs their first answers started are given time to end.
        try waitForFeedWaits(server, count: watches.count)
        Thread.sleep(forTimeInterval: 2)

        var watchTimes: [Double] = []
        var commandTimes: [Double] = []
        var random = SplitMix64(seed: 0x57A7_C4ED)
        // Between edits, 0.5 to 1 s: the watches' own echoes of an edit (A pulls what it pushed, B scans what it
        // pulled) end before the next, and no edit falls in step with the feed's waits.
        func pause() { usleep(useconds_t(500_000 + random.below(500_000))) }
        let commandEvery = max(1, edits / max(1, commandEdits))
        for edit in 0..<edits {
            if edit % 20 == 0 { progress("W1: edit \(edit + 1)/\(edits) through the watches") }
            let quantity = Int64(9_000_000 + edit)
            let index = edit % count
            let start = try editByHand(store: watched.a, table: Self.watchedTable, index: index, quantity: quantity)
            watchTimes.append(
                try waitForEdit(
                    store: watched.b, table: Self.watchedTable, index: index, quantity: quantity, since: start)
                    * 1_000)
            pause()
            if edit % commandEvery == 0, commandTimes.count < commandEdits {
                commandTimes.append(try commandEdit(commandTimes.count, of: count, stores: commanded))
                pause()
            }
        }
        let unexpected = try Self.stop(watches)

        addEditLatencyRows(watchTimes: watchTimes, commandTimes: commandTimes, unexpected: unexpected)
    }

    /// W1's rows and notes: the edits' latencies through the watches and through the commands, and the events the
    /// watches told that were no runs.
    private mutating func addEditLatencyRows(watchTimes: [Double], commandTimes: [Double], unexpected: [String]) {
        let count = configuration.smallRecords
        let edits = configuration.watchEdits
        let watch = Sample(watchTimes)
        let commands = Sample(commandTimes)
        let watchP95 = watch.percentile(95)
        let commandsP95 = commands.percentile(95)
        let through = "hand edit to the other store's file, two tablesync watch (\(count) records)"
        let byCommands = "tablesync push, then sync in the other store (\(commandTimes.count) edits)"
        results.rows.append(
            ResultRow(
                id: "W1", what: "\(through): p50 of \(edits)", unit: "ms", value: watch, baselineName: byCommands,
                baseline: commands, target: nil, met: nil))
        results.rows.append(
            ResultRow(
                id: "W1", what: "\(through): p95 of \(edits)", unit: "ms", value: Sample([watchP95]),
                baselineName: "\(byCommands): p95", baseline: Sample([commandsP95]), target: "≤ 1,000 ms",
                met: watchP95 <= 1_000))
        results.notes.append(
            """
            W1: \(edits) hand edits (a record file rewritten in place, one property changed) through the watches, \
            \(commandTimes.count) through the commands, taking turns; each timed from the start of its write until the \
            other store's file held it (polled every 1 ms: a stat, then a read when it changed); 0.5-1 s between edits
            """)
        if !unexpected.isEmpty {
            results.notes.append("W1: the watches told events other than runs: \(unexpected.joined(separator: "; "))")
        }
    }

    /// Edit `number` made by hand in `stores.a` (on one of its first `count` records), sent with `push` and taken in
    /// `stores.b` with `sync`: milliseconds from the start of the write until the other store's file held it.
    private func commandEdit(_ number: Int, of count: Int, stores: (a: String, b: String)) throws -> Double {
        let quantity = Int64(9_500_000 + number)
        let index = number % count
        let start = try editByHand(store: stores.a, table: Self.commandTable, index: index, quantity: quantity)
        try expect(try tablesync(["-C", stores.a, "push", "--json"]), member: "applied", equals: 1)
        try tablesync(["-C", stores.b, "sync", "--json"])
        return try waitForEdit(
            store: stores.b, table: Self.commandTable, index: index, quantity: quantity, since: start, seconds: 0)
            * 1_000
    }

    /// Stops `watches`, each of which must end with exit 0 and a stopped event; returns, per watch, the events it
    /// told that are no runs.
    private static func stop(_ watches: [WatchProcess]) throws -> [String] {
        var unexpected: [String] = []
        for watch in watches {
            let stopped = try watch.stop()
            let names = watch.eventNames()
            guard stopped.exitStatus == 0, names.last == "stopped" else {
                throw BenchError(
                    what: "W1",
                    detail: "the watch on \(watch.store) ended with exit \(stopped.exitStatus), events \(names)")
            }
            let odd = names.filter { !["started", "pushed", "synced", "stopped"].contains($0) }
            if !odd.isEmpty { unexpected.append("\(watch.store): \(odd.joined(separator: ", "))") }
        }
        return unexpected
    }

    /// Rewrites record `index` of `table` in `store` by hand with its `quantity` set; returns when the write began.
    func editByHand(store: String, table: String, index: Int, quantity: Int64) throws -> Double {
        let path = recordPath(store: store, table: table, index: index)
        guard let bytes = FileManager.default.contents(atPath: path),
            var record = try JSONParser.parse(Array(bytes)).objectValue
        else {
            throw BenchError(what: "edit", detail: "cannot read \(path)")
        }
        record["quantity"] = .integer(quantity)
        let output = CanonicalJSON.encode(.object(record))
        let start = Clock.now()
        try Self.writeByHand(output, to: path)
        return start
    }

    /// Waits until record `index` of `table` in `store` holds `quantity`, looking every millisecond (a `stat`, and a
    /// read when the file changed); returns the seconds since `start`.
    /// - Throws: ``BenchError`` when it does not within `seconds` of `start` (`0`: look once).
    private func waitForEdit(
        store: String, table: String, index: Int, quantity: Int64, since start: Double, seconds: Double = 30
    ) throws -> Double {
        let path = recordPath(store: store, table: table, index: index)
        var seen: TreeSnapshot.Identity?
        while true {
            let now = Clock.now()
            if let identity = TreeSnapshot.Identity(path: path), identity != seen {
                let record = FileManager.default.contents(atPath: path).flatMap { try? JSONParser.parse(Array($0)) }
                if record?["quantity"]?.integerValue == quantity { return now - start }
                // A file read halfway through its write is read again.
                seen = record == nil ? nil : identity
            }
            guard now - start < seconds else {
                throw BenchError(
                    what: "W1",
                    detail:
                        "\(path) did not hold the edit \(String(format: "%.1f", now - start)) s after it was written")
            }
            usleep(1_000)
        }
    }

    func recordPath(store: String, table: String, index: Int) -> String {
        "\(store)/tables/\(table)/\(RecordFileName.fileName(for: dataSet.id(index)))"
    }

    /// Waits until at least `count` change feed requests wait on `server`.
    private func waitForFeedWaits(_ server: ServerProcess, count: Int, seconds: Double = 60) throws {
        let deadline = Clock.now() + seconds
        while try ServerMetricsReading(port: server.port).changeFeedWaiting < count {
            guard Clock.now() < deadline else {
                throw BenchError(
                    what: "change feed", detail: "fewer than \(count) requests waiting after \(Int(seconds)) s")
            }
            usleep(50_000)
        }
    }

    // MARK: - W2

    /// W2: one `tablesync watch` on an idle store of `smallRecords` records for `idleWatchSeconds`: the requests the
    /// server answered in that time (its `/metrics`) and the processor time the watch spent (its CPU-time clock),
    /// each scaled to a minute and an hour; the baseline is an hour of cron: 12 `tablesync sync` of the same store,
    /// their requests counted the same way and their processor time from `wait4`.
    private mutating func measureIdleWatch(server: ServerProcess, store: String) throws {
        let seconds = configuration.idleWatchSeconds
        let count = configuration.smallRecords
        let watch = try WatchProcess(executable: configuration.binaries + "/tablesync", store: store)
        try watch.waitForStart()
        try waitForFeedWaits(server, count: 1)
        // The window opens just after an answer of the feed: it then holds every answer due in it, never part of the
        // wait before. It lasts a second longer than the setting, so the answer due at its end is in it.
        progress("W2: one idle tablesync watch on \(count) records; waiting for an answer of its change feed")
        try waitForFeedAnswer(server)
        progress("W2: measuring the idle watch for \(Int(seconds)) s")
        let eventsBefore = watch.eventNames().count
        let requestsBefore = try ServerMetricsReading(port: server.port).requestsAnswered
        let processorBefore = try watch.processorSeconds()
        let start = Clock.now()
        Thread.sleep(forTimeInterval: seconds + 1)
        let processor = try watch.processorSeconds() - processorBefore
        let elapsed = Clock.now() - start
        let requests = try ServerMetricsReading(port: server.port).requestsAnswered - requestsBefore
        let events = watch.eventNames().dropFirst(eventsBefore)
        let stopped = try watch.stop()
        guard stopped.exitStatus == 0 else {
            throw BenchError(what: "W2", detail: "the watch ended with exit \(stopped.exitStatus)")
        }

        let (cronRequests, cronProcessor) = try cronHour(server: server, store: store)

        let perMinute = Double(requests) / seconds * 60
        let keepAlive = 60 / Double(configuration.changeWait)
        let perHour = processor / elapsed * 3_600
        let cron = "cron: 12 tablesync sync an hour, same store"
        results.rows.append(
            ResultRow(
                id: "W2", what: "idle tablesync watch, \(count) records: requests to the server a minute",
                unit: "requests/min", value: Sample([perMinute]), baselineName: cron,
                baseline: Sample([Double(cronRequests) / 60]),
                target: "≤ \(String(format: "%g", keepAlive))/min",
                met: perMinute <= keepAlive + 1e-9))
        results.rows.append(
            ResultRow(
                id: "W2", what: "idle tablesync watch, \(count) records: processor time an hour", unit: "s/h",
                value: Sample([perHour]), baselineName: cron, baseline: Sample([cronProcessor]), target: "< 1 s/h",
                met: perHour < 1))
        results.notes.append(
            """
            W2: the watch measured for \(Int(seconds)) s (+1) from an answer of its change feed (--max-change-wait \
            \(configuration.changeWait)): \(requests) requests answered, \(String(format: "%.4f", processor)) s of \
            processor time, \(events.isEmpty ? "no events" : "events \(events.joined(separator: ", "))"); its whole \
            life, start and stop included: \(String(format: "%.3f", stopped.processorSeconds)) s (wait4). Cron's 12 \
            syncs: \(cronRequests) requests, \(String(format: "%.3f", cronProcessor)) s
            """)
    }

    /// Returns once the change feed answers a wait (304 at its end): the idle window starts just after an answer.
    private func waitForFeedAnswer(_ server: ServerProcess) throws {
        let answered = try ServerMetricsReading(port: server.port).changeFeedTimeouts
        let deadline = Clock.now() + Double(configuration.changeWait) + 30
        while try ServerMetricsReading(port: server.port).changeFeedTimeouts == answered {
            guard Clock.now() < deadline else {
                throw BenchError(what: "W2", detail: "the watch's change feed request was not answered in time")
            }
            usleep(50_000)
        }
    }

    /// Cron's hour beside the watch: 12 `tablesync sync` of `store`, their requests to the server and processor time.
    private func cronHour(server: ServerProcess, store: String) throws -> (requests: Int, processor: Double) {
        let cronRuns = 12
        var processor = 0.0
        let requestsBefore = try ServerMetricsReading(port: server.port).requestsAnswered
        for run in 1...cronRuns {
            progress("W2: cron's hour, tablesync sync \(run)/\(cronRuns) of the same store")
            processor += try tablesync(["-C", store, "sync", "--json"]).processorSeconds
        }
        return (try ServerMetricsReading(port: server.port).requestsAnswered - requestsBefore, processor)
    }

    // MARK: - W3

    /// W3: `feedWaits` change feed requests waiting on a fresh `tablesync-server`, each on a connection of its own
    /// (``FeedWaits``, standing for as many idle watchers: starting that many `tablesync watch` processes would
    /// measure the machine, not the server): the server's resident memory (`VmRSS`) and its peak (`VmHWM`) once they
    /// all wait, against the same server before them, run by run.
    private mutating func measureFeedWaitMemory(database: String) throws {
        let count = configuration.feedWaits
        try FeedWaits.allowOpenFiles(count)
        // Longer than the requests take to open on a loaded machine, so none is answered before the reading.
        let wait = 120
        var idle: [Double] = []
        var idlePeak: [Double] = []
        var waiting: [Double] = []
        var waitingPeak: [Double] = []
        var exits: [Double] = []
        for run in 1...runs {
            progress("W3 run \(run)/\(runs): \(count) change feed requests waiting on a fresh tablesync-server")
            let server = try ServerProcess(
                executable: configuration.binaries + "/tablesync-server", database: "sqlite:" + database,
                tables: [Self.watchedTable], logFile: work + "/feed-server.log",
                options: [
                    "--max-connections", String(count + 100), "--max-change-wait", String(wait),
                    "--idle-timeout", String(wait * 2 + 60)
                ])
            defer { server.stopWaiting() }
            let first = try PageConnection(port: server.port).exchange(
                "GET", "\(TablePath.changes)?\(ChangeFeed.tablesParameter)=\(Self.watchedTable)")
            guard let eTag = PageConnection.header("etag", in: first.head) else {
                throw BenchError(what: "W3", detail: "the change feed's answer has no ETag: \(first.head)")
            }
            usleep(500_000)
            idle.append(try memoryMegabytes(server, "VmRSS"))
            idlePeak.append(try memoryMegabytes(server, "VmHWM"))
            let waits = try FeedWaits(
                port: server.port, tables: [Self.watchedTable], eTag: eTag, waitSeconds: wait, count: count)
            try waitForFeedWaits(server, count: count, seconds: Double(wait) / 2)
            waiting.append(try memoryMegabytes(server, "VmRSS"))
            waitingPeak.append(try memoryMegabytes(server, "VmHWM"))
            let stopping = Clock.now()
            server.stopWaiting()
            exits.append(Clock.now() - stopping)
            waits.close()
        }
        let added = zip(waiting, idle).map { $0 - $1 }
        let addedPeak = zip(waitingPeak, idlePeak).map { $0 - $1 }
        results.rows.append(
            ResultRow(
                id: "W3", what: "tablesync-server RSS, \(count) change feed requests waiting", unit: "MB",
                value: Sample(waiting), baselineName: "the same server idle, just before", baseline: Sample(idle),
                target: "≤ idle + 100 MB", met: Sample(added).max <= 100))
        results.rows.append(
            ResultRow(
                id: "W3", what: "tablesync-server peak RSS (VmHWM), \(count) change feed requests waiting", unit: "MB",
                value: Sample(waitingPeak), baselineName: "the same server's peak, just before",
                baseline: Sample(idlePeak), target: "≤ idle + 100 MB", met: Sample(addedPeak).max <= 100))
        let perRequest = Sample(added).median * 1_000_000 / Double(count) / 1_000
        results.notes.append(
            """
            W3: \(count) connections from the bench process, each a GET /changes as a watch sends it (the current ETag \
            in If-None-Match, wait=\(wait); server --max-connections \(count + 100) --max-change-wait \(wait)), \
            standing for \(count) idle watchers; above idle: \(Self.list(added, "%.1f")) MB \
            (\(String(format: "%.0f", perRequest)) KB a request); exit after SIGTERM with them waiting: \
            \(Self.list(exits, "%.2f")) s
            """)
    }

    /// `values` each in `format`, comma-separated.
    private static func list(_ values: [Double], _ format: String) -> String {
        values.map { String(format: format, $0) }.joined(separator: ", ")
    }

    /// A memory figure of `server` from /proc (`VmRSS`, `VmHWM`) in MB.
    private func memoryMegabytes(_ server: ServerProcess, _ field: String) throws -> Double {
        guard let kilobytes = ChildProcess.memoryKilobytes(server.processIdentifier, field) else {
            throw BenchError(
                what: "tablesync-server", detail: "no \(field) in /proc/\(server.processIdentifier)/status")
        }
        return Double(kilobytes) * 1_024 / 1_000_000
    }
}
