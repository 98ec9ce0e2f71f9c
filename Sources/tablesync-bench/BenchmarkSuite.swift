import Foundation
import SyncProtocol
import TableSync
import TestSupport

/// The benchmarks (docs/bench.md), in the order that lets each one set up the next: the JSON writers, then against
/// one `tablesync-server` on SQLite the initial pull (P1) with its disk floor and the SDKs' paging, memory
/// (P4), bytes on the wire (P5), `status` against `git status` (P2), push (P3), a sync with nothing to do
/// (P6), an incremental pull (P7), a sync that lost its cache (P8), a sync while another program keeps the disk
/// busy (P9) and the first sync of a git clone after the server moved (P10); then, each against a server of its own,
/// the cost of checking a JWT (A1) and live sync (W1–W3). Every figure is a median over the runs, beside a baseline
/// measured in the same run.
struct BenchmarkSuite {
    /// Sizes and places.
    struct Configuration {
        var binaries: String
        var work: String
        var records: Int
        var smallRecords: Int
        var pushRecords: Int
        /// Updates pushed over the slow link, and its one-way delay in seconds (P3).
        var slowLinkPushRecords: Int
        var slowLinkDelay: Double
        var changedRecords: Int
        var editedFiles: Int
        /// Hand edits synced on a quiet and on a busy disk, and the megabytes the busy neighbour rewrites (P9).
        var busyDiskEdits: Int
        var busyDiskMegabytes: Int
        var runs: Int
        /// Run A1 alone.
        var authOnly = false
        /// Run C1 alone, against the `tablesync` binaries in this directory.
        var pushProcessorBaseline: String?
        /// Hand edits carried by two watches, and by `push` then `sync` (W1).
        var watchEdits = 200
        var watchCommandEdits = 40
        /// Hand edits under a watch of the main table, and pushed by `tablesync push` (W4).
        var watchCostEdits = 20
        /// Seconds an idle watch is measured (W2).
        var idleWatchSeconds = 120.0
        /// Change feed requests left waiting on the server (W3).
        var feedWaits = 1_000
        /// The server's longest change feed wait in seconds (`--max-change-wait`, W1 and W2).
        var changeWait = 30
        /// Run W1–W4 alone.
        var watchOnly = false
        /// Run P2, P8 and P10 alone, after one pull of the main table.
        var gitOnly = false
    }

    let configuration: Configuration
    let dataSet: DataSet
    var results: ResultTable
    /// Each record of the main table exactly as the server sends it, in pull order.
    private var served: [[String: JSONValue]] = []
    /// Figures later benchmarks compare with: P1's pull rate (P7) and peak memory (P4).
    private var initialPullRates = Sample([])
    private var initialPullMemory = Sample([])
    /// P3's batched push rate on loopback, which the same push over the slow link is compared with.
    private var loopbackBatchedPushRates = Sample([])
    private let startedAt = Clock.now()

    static let mainTable = "bench"
    static let smallTable = "small"
    static let queryID = "all"
    /// The client's default page size, which the disk floor writes at.
    static let pullPageSize = 1000

    init(configuration: Configuration) {
        self.configuration = configuration
        dataSet = DataSet(count: configuration.records)
        results = ResultTable(machine: Machine.description(), records: configuration.records, runs: configuration.runs)
        // A peer that closes a socket early (through the proxy, W3's waits, the page timings) must not end the
        // benchmarks with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
    }

    var work: String { configuration.work }
    var runs: Int { configuration.runs }
    var records: Int { configuration.records }

    mutating func run() async throws -> ResultTable {
        try remove(work)
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        if configuration.authOnly {
            try await measureAuthCost()
            return results
        }
        if let baseline = configuration.pushProcessorBaseline {
            try await measurePushProcessorTime(baseline: baseline)
            return results
        }
        if configuration.watchOnly {
            // The size of the watched stores is what the heading's record count stands for here.
            results.records = configuration.smallRecords
            try await measureLiveSync()
            try await measureWatchEditCost()
            noteLoadAverage()
            return results
        }
        served = (0..<records).map { ServerSeeder.servedRecord($0, dataSet: dataSet) }
        progress("P0: CanonicalJSON.encode vs JSONEncoder")
        try measureJSONWriters()

        let database = work + "/server.sqlite"
        progress("seeding the server with \(records) + \(configuration.smallRecords) records")
        try await ServerSeeder.seed(
            database: database, tables: [(Self.mainTable, records), (Self.smallTable, configuration.smallRecords)],
            dataSet: dataSet)
        let server = try ServerProcess(
            executable: configuration.binaries + "/tablesync-server", database: "sqlite:" + database,
            tables: [Self.mainTable, Self.smallTable], logFile: work + "/server.log")
        defer { server.stopWaiting() }
        let store = work + "/store"
        if configuration.gitOnly {
            try await measureGitPaths(server: server, store: store, database: database)
            return results
        }
        try measureInitialPull(server: server, store: store)
        try measureSmallPullMemory(server: server)
        let proxy = try LoopbackProxy(.link(upstreamPort: Int(server.port)))
        defer { proxy.stop() }
        let wireStore = work + "/wire-store"
        try measurePullWire(proxy: proxy, store: wireStore)
        try measureStatus(store: store)
        try measurePush(server: server)
        try measurePushOverSlowLink(server: server)
        try measurePushWire(proxy: proxy, store: wireStore)
        try measureSyncOnBusyDisk(server: server)
        try measureNoChangeSync(store: store)
        try await measureIncrementalPull(store: store, database: database)
        try measureSyncWithoutCache(store: store)
        try await measureCloneFirstSync(store: store, database: database)
        try await measureAuthCost()
        try await measureLiveSync()
        try await measureWatchEditCost()
        noteLoadAverage()
        results.rows = results.rows.enumerated().sorted { ($0.element.id, $0.offset) < ($1.element.id, $1.offset) }.map(
            \.element)
        return results
    }

    /// P2, P8 and P10 alone (`scripts/bench.sh git`), after one pull of the main table.
    private mutating func measureGitPaths(server: ServerProcess, store: String, database: String) async throws {
        progress("pulling \(records) records")
        try freshStore(store, remote: server.baseURL, table: Self.mainTable)
        try expect(
            try tablesync(["-C", store, "pull", Self.mainTable, "--query-id", Self.queryID, "--json"]),
            member: "written", equals: records)
        try measureStatus(store: store)
        try measureSyncWithoutCache(store: store)
        try await measureCloneFirstSync(store: store, database: database)
        noteLoadAverage()
    }

    /// Notes the machine's load average as the run ends: other processes share this machine.
    private mutating func noteLoadAverage() {
        results.notes.append("load average at the end: \(Machine.loadAverage()) (other processes share this machine)")
    }

    // MARK: - A1

    private mutating func measureAuthCost() async throws {
        progress("A1: a page and a batch with a static token, an HS256 JWT and an RS256 JWT")
        let samples = max(10, runs * 10)
        results.rows += try await AuthCostBenchmark(binaries: configuration.binaries, work: work, samples: samples)
            .run()
        results.notes.append(
            """
            A1: \(samples) requests per credential after 2 (pages) and 1 (batches) unmeasured, interleaved, on SQLite; \
            every request's token is checked anew
            """
        )
    }

    // MARK: - P0

    private mutating func measureJSONWriters() throws {
        let codable = served.map(CodableRecord.init)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var canonical: [Double] = []
        var foundation: [Double] = []
        var checksum = 0
        for _ in 0..<runs {
            var start = Clock.now()
            for record in served { checksum &+= CanonicalJSON.encode(.object(record)).count }
            canonical.append(Double(records) / (Clock.now() - start))
            start = Clock.now()
            for record in codable { checksum &+= try encoder.encode(record).count }
            foundation.append(Double(records) / (Clock.now() - start))
        }
        let ratio = Sample(canonical).median / Sample(foundation).median
        results.rows.append(
            ResultRow(
                id: "P0", what: "CanonicalJSON.encode, one record file each", unit: "records/s",
                value: Sample(canonical), baselineName: "JSONEncoder .prettyPrinted+.sortedKeys",
                baseline: Sample(foundation), target: "≥ 1.0×", met: ratio >= 1))
        results.notes.append(
            "P0 encodes \(records) records per run (\(checksum / runs / 2) bytes of output each way, about)")
    }

    // MARK: - P1, P4 at full size

    private mutating func measureInitialPull(server: ServerProcess, store: String) throws {
        // The files as the pull writes them: canonical, stamped with their synced marks.
        let files = served.map {
            (name: RecordFileName.fileName(for: $0[SystemProperty.id]!.stringValue!), bytes: SyncedMark.stamped($0))
        }
        let floor = DiskFloor(files: files, pageSize: Self.pullPageSize)
        let floorDirectory = work + "/floor"
        let stockStore = work + "/stock-store"
        var floorRates: [Double] = []
        var pullRates: [Double] = []
        var stockRates: [Double] = []
        var memory: [Double] = []
        for run in 1...runs {
            // On the small table: at 50 records a page the SDKs' way takes minutes for the main one, and its rate
            // is set by the cost of a page, not by the size of the table.
            progress("P1 run \(run)/\(runs): SDK paging (ge + $skip, 50 a page), \(configuration.smallRecords) records")
            try freshStore(stockStore, remote: server.baseURL, table: Self.smallTable)
            let stock = try ChildProcess.run(
                configuration.binaries + "/tablesync-bench",
                ["stock-pull", "-C", stockStore, Self.smallTable, "--query-id", Self.queryID])
            stockRates.append(Double(configuration.smallRecords) / stock.seconds)
            try discard(stockStore)

            progress("P1 run \(run)/\(runs): disk floor")
            try discard(floorDirectory)
            try FileManager.default.createDirectory(atPath: floorDirectory, withIntermediateDirectories: true)
            floorRates.append(
                Double(records)
                    / (try floor.run(directory: floorDirectory + "/files", temporaryDirectory: floorDirectory + "/tmp"))
            )
            try discard(floorDirectory)

            progress("P1 run \(run)/\(runs): tablesync pull")
            try freshStore(store, remote: server.baseURL, table: Self.mainTable)
            let pull = try tablesync(["-C", store, "pull", Self.mainTable, "--query-id", Self.queryID, "--json"])
            try expect(pull, member: "written", equals: records)
            pullRates.append(Double(records) / pull.seconds)
            memory.append(Double(pull.peakResidentBytes) / 1_000_000)
        }
        try expectFloorFiles(files, pulledInto: store)
        let pull = Sample(pullRates)
        let floorSample = Sample(floorRates)
        results.rows.append(
            ResultRow(
                id: "P1", what: "initial pull, tablesync pull (\(records) records)", unit: "records/s",
                value: pull, baselineName: "disk floor: same files, same fsync scheme",
                baseline: floorSample, target: "≥ 15,000/s, ≥ 0.75×",
                met: pull.median >= 15_000 && pull.median / floorSample.median >= 0.75))
        results.rows.append(
            ResultRow(
                id: "P1", what: "initial pull, tablesync pull (\(records) records)", unit: "records/s",
                value: pull, baselineName: "SDK mode: ge + $skip, 50/page (small table)",
                baseline: Sample(stockRates), target: nil, met: nil))
        initialPullRates = pull
        initialPullMemory = Sample(memory)
    }

    /// Checks that the pull wrote the disk floor's bytes (the first, middle and last of `files`): else the floor
    /// would not stand for the same work.
    private func expectFloorFiles(_ files: [(name: String, bytes: [UInt8])], pulledInto store: String) throws {
        for index in [0, records / 2, records - 1] {
            let path = "\(store)/tables/\(Self.mainTable)/\(files[index].name)"
            guard FileManager.default.contents(atPath: path).map(Array.init) == files[index].bytes else {
                throw BenchError(
                    what: "P1",
                    detail: "\(path) differs from the disk floor's bytes; the floor would not write the same files")
            }
        }
    }

    private mutating func measureSmallPullMemory(server: ServerProcess) throws {
        let store = work + "/small-store"
        var memory: [Double] = []
        for run in 1...runs {
            progress("P4 run \(run)/\(runs): tablesync pull of \(configuration.smallRecords) records")
            try freshStore(store, remote: server.baseURL, table: Self.smallTable)
            let pull = try tablesync(["-C", store, "pull", Self.smallTable, "--query-id", Self.queryID, "--json"])
            try expect(pull, member: "written", equals: configuration.smallRecords)
            memory.append(Double(pull.peakResidentBytes) / 1_000_000)
        }
        try discard(store)
        let small = Sample(memory)
        results.rows.append(
            ResultRow(
                id: "P4", what: "peak RSS of tablesync pull, \(configuration.smallRecords) records", unit: "MB",
                value: small, target: "≤ 150 MB", met: small.max <= 150))
        results.rows.append(
            ResultRow(
                id: "P4", what: "peak RSS of tablesync pull, \(records) records", unit: "MB",
                value: initialPullMemory, baselineName: "the same at \(configuration.smallRecords) records",
                baseline: small, target: "≤ 150 MB, ≤ 1.25×",
                met: initialPullMemory.max <= 150 && initialPullMemory.median / small.median <= 1.25))
    }

    // MARK: - P5

    private mutating func measurePullWire(proxy: LoopbackProxy, store: String) throws {
        progress("P5: initial pull through the counting proxy")
        try freshStore(store, remote: proxy.baseURL, table: Self.mainTable)
        proxy.resetCounts()
        let pull = try tablesync(["-C", store, "pull", Self.mainTable, "--query-id", Self.queryID, "--json"])
        try expect(pull, member: "written", equals: records)
        let counts = proxy.counts
        results.rows.append(Self.wireRow(what: "initial pull", counts: counts, records: served, direction: "pulled"))
        results.notes.append(
            """
            P5 counts every byte through a TCP proxy on loopback (headers included; one run, not timed): pull \
            \(counts.toServer) B to the server, \(counts.toClient) B back
            """
        )
    }

    /// A P5 row: the bytes through the proxy both ways against the compact JSON of the records moved.
    private static func wireRow(
        what: String, counts: (toServer: Int, toClient: Int), records: [[String: JSONValue]],
        direction: String
    ) -> ResultRow {
        let raw = records.reduce(0) { $0 + CanonicalJSON.encode(.object($1), style: .compact).count }
        let wire = Double(counts.toServer + counts.toClient) / 1_000_000
        let rawMB = Double(raw) / 1_000_000
        return ResultRow(
            id: "P5", what: "bytes on the wire, \(what) (both ways)", unit: "MB", value: Sample([wire]),
            baselineName: "compact JSON of the records \(direction)", baseline: Sample([rawMB]),
            target: "≤ 0.3×", met: wire / rawMB <= 0.3)
    }

    private mutating func measurePushWire(proxy: LoopbackProxy, store: String) throws {
        progress("P5: push of \(configuration.pushRecords) updates through the counting proxy")
        // The last records of the main table: the pushes of P2's store never touch them.
        let sent = try editRecords(
            store: store, table: Self.mainTable, indexes: (records - configuration.pushRecords)..<records
        ) {
            $0["quantity"] = .integer(4_000_000)
        }
        proxy.resetCounts()
        let push = try tablesync(["-C", store, "push", "--json"])
        try expect(push, member: "applied", equals: configuration.pushRecords)
        let counts = proxy.counts
        results.rows.append(
            Self.wireRow(
                what: "push of \(configuration.pushRecords) updates", counts: counts, records: sent, direction: "pushed"
            ))
        results.notes.append("P5 push: \(counts.toServer) B to the server, \(counts.toClient) B back")
    }

    // MARK: - P2

    private mutating func measureStatus(store: String) throws {
        progress("P2: committing the store to git")
        let identity = ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"]
        let git = GitWorkTree(directory: store)
        try git.commitEverything(message: "pulled", identity: identity, scratch: work)
        // The commit holds the whole store as `git add -A` would; this first status also takes the files' `stat`
        // data into git's index.
        let unchanged = try git.run(["status", "--porcelain"]).standardOutput
        guard unchanged.isEmpty else {
            throw BenchError(what: "P2", detail: "git status after the commit: \(unchanged.prefix(500))")
        }
        // A sync reconciles the committed tree with the index, as `sync --commit` does for its own commit: the state
        // a person's `status` meets after a cron sync.
        let sync = try tablesync(["-C", store, "sync", "--json"])
        guard Self.writes(try JSONParser.parse(sync.standardOutput)["push"]) == 0 else {
            throw BenchError(what: "P2", detail: "the sync before status sent: \(sync.standardOutput.prefix(500))")
        }
        // What the sync wrote beside the record files (its watermark), committed as `sync --commit` would.
        try git.run(["add", "-A"])
        try git.run(identity + ["commit", "-q", "--no-verify", "--allow-empty", "-m", "synced"])
        _ = try editRecords(store: store, table: Self.mainTable, indexes: 0..<configuration.editedFiles) { record in
            record["title"] = .string((record["title"]?.stringValue ?? "") + " (edited)")
        }
        let (status, gitSample) = try statusAgainstGit(in: store, edits: configuration.editedFiles, label: "")
        try git.run(["checkout", "-q", "--", "tables"])
        results.rows.append(
            ResultRow(
                id: "P2", what: "tablesync status, \(configuration.editedFiles) files edited of \(records)", unit: "s",
                value: status, baselineName: "git status on the same tree, index warm",
                baseline: gitSample, target: "≤ 1.0×", met: status.median <= gitSample.median))
    }

    // MARK: - P3

    /// The push of `pushRecords` updates made by hand in a store of the small table, one request per operation
    /// and batched, alternating run by run. The store holds as many records as the push sends, so its hand-edit
    /// scan is part of the push, not a scan of a table that dwarfs it (P2 measures that).
    private mutating func measurePush(server: ServerProcess) throws {
        let store = work + "/push-store"
        try freshStore(store, remote: server.baseURL, table: Self.smallTable)
        try expect(
            try tablesync(["-C", store, "pull", Self.smallTable, "--json"]), member: "written",
            equals: configuration.smallRecords)
        let measured = try pushRuns(store: store, count: configuration.pushRecords, label: "P3", firstValue: 2_000_000)
        let single = measured.rates[.onePerOperation]!
        let batched = measured.rates[.batched]!
        let count = configuration.pushRecords
        loopbackBatchedPushRates = batched
        results.rows.append(
            ResultRow(
                id: "P3", what: "push \(count) updates, one request each", unit: "ops/s",
                value: single, target: nil, met: nil))
        results.rows.append(
            ResultRow(
                id: "P3", what: "push \(count) updates, batched", unit: "ops/s",
                value: batched, baselineName: "one request per operation", baseline: single,
                target: "≥ 20×, ≥ 5,000/s", met: batched.median / single.median >= 20 && batched.median >= 5_000))
        // The floor over the single route is the most any push of these edits could show on this machine.
        let floor = try measurePushDiskFloor(store: store, count: count)
        results.rows.append(
            ResultRow(
                id: "P3", what: "push \(count) updates: disk floor (read, replace durably)", unit: "ops/s",
                value: floor, baselineName: "one request per operation", baseline: single, target: nil, met: nil))
        results.rows.append(
            ResultRow(
                id: "P3", what: "push \(count) updates, batched, against its disk floor", unit: "ops/s",
                value: batched, baselineName: "disk floor: read each file, replace it durably",
                baseline: floor, target: nil, met: nil))
        results.rows.append(
            ResultRow(
                id: "P3", what: "push \(count) updates, batched: requests", unit: "requests",
                value: measured.requests[.batched]!, baselineName: "one request per operation",
                baseline: measured.requests[.onePerOperation]!, target: nil, met: nil))
        results.rows.append(
            ResultRow(
                id: "P3", what: "push \(count) updates, batched: body bytes both ways", unit: "MB",
                value: measured.bodyBytes[.batched]!, baselineName: "one request per operation",
                baseline: measured.bodyBytes[.onePerOperation]!, target: nil, met: nil))
        try discard(store)
    }

    /// ``PushDiskFloor`` on a copy of the push store's edited files (the copy is not timed), `runs` times.
    private func measurePushDiskFloor(store: String, count: Int) throws -> Sample {
        let names = (0..<count).map { RecordFileName.fileName(for: dataSet.id($0)) }
        let floor = PushDiskFloor(names: names, batchSize: SyncOptions.defaultBatchMaxOperations)
        let floorDirectory = work + "/push-floor"
        var rates: [Double] = []
        for run in 1...runs {
            progress("P3 run \(run)/\(runs): disk floor of the push")
            try discard(floorDirectory)
            try FileManager.default.createDirectory(atPath: floorDirectory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: "\(store)/tables/\(Self.smallTable)", toPath: floorDirectory + "/files")
            rates.append(
                Double(count)
                    / (try floor.run(directory: floorDirectory + "/files", spareDirectory: floorDirectory + "/spares")))
        }
        try discard(floorDirectory)
        return Sample(rates)
    }

    /// The same push over a link with latency (``LoopbackProxy``), where a round trip per operation is what users
    /// of the single-request clients wait for; fewer updates, since each single request costs a round trip.
    private mutating func measurePushOverSlowLink(server: ServerProcess) throws {
        let link = try LoopbackProxy(.link(upstreamPort: Int(server.port), delay: configuration.slowLinkDelay))
        defer { link.stop() }
        let store = work + "/slow-link-store"
        // Pulled after P3's pushes, so its versions are the server's.
        try freshStore(store, remote: link.baseURL, table: Self.smallTable)
        try expect(
            try tablesync(["-C", store, "pull", Self.smallTable, "--json"]), member: "written",
            equals: configuration.smallRecords)
        let count = configuration.slowLinkPushRecords
        let roundTrip = String(format: "%.0f ms", configuration.slowLinkDelay * 2_000)
        let measured = try pushRuns(
            store: store, count: count, label: "P3 over a \(roundTrip) round trip", firstValue: 5_000_000)
        let single = measured.rates[.onePerOperation]!
        let batched = measured.rates[.batched]!
        results.rows.append(
            ResultRow(
                id: "P3", what: "push \(count) updates over a \(roundTrip) round trip, one request each", unit: "ops/s",
                value: single, target: nil, met: nil))
        results.rows.append(
            ResultRow(
                id: "P3", what: "push \(count) updates over a \(roundTrip) round trip, batched", unit: "ops/s",
                value: batched, baselineName: "one request per operation, same link", baseline: single,
                target: "≥ 20×", met: batched.median / single.median >= 20))
        // The loopback push's size over the slow link, batched only (one request each would take minutes): what
        // the pipelined batches leave of the latency.
        let fullCount = configuration.pushRecords
        let pipelined = try pushRuns(
            store: store, count: fullCount, label: "P3 over a \(roundTrip) round trip",
            firstValue: 7_000_000, variants: [.batched]
        ).rates[.batched]!
        results.rows.append(
            ResultRow(
                id: "P3", what: "push \(fullCount) updates over a \(roundTrip) round trip, batched", unit: "ops/s",
                value: pipelined, baselineName: "the same push on loopback", baseline: loopbackBatchedPushRates,
                target: "≥ 0.9×", met: pipelined.median / loopbackBatchedPushRates.median >= 0.9))
        try discard(store)
    }

    /// `runs` pushes of `count` hand edits of the small table's first records with each of `variants`, the
    /// variants alternating so that drift on a shared machine hits both alike.
    private func pushRuns(
        store: String, count: Int, label: String, firstValue: Int64, variants: [PushVariant] = PushVariant.allCases
    )
        throws -> (rates: [PushVariant: Sample], requests: [PushVariant: Sample], bodyBytes: [PushVariant: Sample])
    {
        var rates: [PushVariant: [Double]] = [:]
        var requests: [PushVariant: [Double]] = [:]
        var bodyBytes: [PushVariant: [Double]] = [:]
        var value = firstValue
        for run in 1...runs {
            for variant in variants {
                progress("\(label) run \(run)/\(runs): push of \(count) updates, \(variant.description)")
                value += 1
                let quantity = value
                _ = try editRecords(store: store, table: Self.smallTable, indexes: 0..<count) {
                    $0["quantity"] = .integer(quantity)
                }
                let push = try tablesync(["-C", store, "push", "--json"] + variant.arguments)
                try expect(push, member: "applied", equals: count)
                rates[variant, default: []].append(Double(count) / push.seconds)
                let answer = try JSONParser.parse(push.standardOutput)
                requests[variant, default: []].append(Double(answer["requests"]?.integerValue ?? 0))
                let bytes = (answer["bytesSent"]?.integerValue ?? 0) + (answer["bytesReceived"]?.integerValue ?? 0)
                bodyBytes[variant, default: []].append(Double(bytes) / 1_000_000)
            }
        }
        return (rates.mapValues(Sample.init), requests.mapValues(Sample.init), bodyBytes.mapValues(Sample.init))
    }

    // MARK: - P6

    private mutating func measureNoChangeSync(store: String) throws {
        progress("P6: sync with nothing to do (one warm-up sync first)")
        try tablesync(["-C", store, "sync", "--json"])
        var syncTimes: [Double] = []
        var statusTimes: [Double] = []
        var written: [Double] = []
        var writtenNames: [String] = []
        for run in 1...runs {
            progress("P6 run \(run)/\(runs)")
            statusTimes.append(try tablesync(["-C", store, "status", "--json"]).seconds)
            let before = TreeSnapshot(root: store, excluding: [".tablesync", ".git"])
            let sync = try tablesync(["-C", store, "sync", "--json"])
            let changed = before.changedFiles(
                comparedWith: TreeSnapshot(root: store, excluding: [".tablesync", ".git"]))
            written.append(Double(changed.count))
            writtenNames += changed
            syncTimes.append(sync.seconds)
        }
        let files = Sample(written)
        let sync = Sample(syncTimes)
        results.rows.append(
            ResultRow(
                id: "P6", what: "sync with nothing new: files written in the store", unit: "files",
                value: files, target: "0", met: files.max == 0))
        results.rows.append(
            ResultRow(
                id: "P6", what: "sync with nothing new: wall time (\(records) records)", unit: "s",
                value: sync, baselineName: "tablesync status on the same clean store",
                baseline: Sample(statusTimes), target: "≤ 1 s", met: sync.median <= 1))
        if !writtenNames.isEmpty {
            results.notes.append("P6 wrote: \(Set(writtenNames).sorted().prefix(10).joined(separator: ", "))")
        }
    }

    // MARK: - P7

    private mutating func measureIncrementalPull(store: String, database: String) async throws {
        let changed = configuration.changedRecords
        var rates: [Double] = []
        for run in 0..<runs {
            progress("P7 run \(run + 1)/\(runs): \(changed) records changed on the server, then an incremental pull")
            try await ServerSeeder.touch(
                database: database, table: Self.mainTable, indexes: (run * changed)..<((run + 1) * changed),
                dataSet: dataSet, value: Int64(3_000_000 + run))
            let pull = try tablesync(["-C", store, "pull", Self.mainTable, "--query-id", Self.queryID, "--json"])
            try expect(pull, member: "written", equals: changed)
            rates.append(Double(changed) / pull.seconds)
        }
        results.rows.append(
            ResultRow(
                id: "P7", what: "incremental pull, \(changed) changed of \(records)", unit: "records/s",
                value: Sample(rates), baselineName: "P1: initial pull rate", baseline: initialPullRates, target: nil,
                met: nil))
    }

    // MARK: - P8

    /// The first sync of a store without `.tablesync/` (a restore, a lost cache): what it sends, and how many of its
    /// files it takes for the server's copies from their synced marks, without a request; against a sync of the same
    /// store with its cache (P6's figure, measured again here).
    private mutating func measureSyncWithoutCache(store: String) throws {
        var times: [Double] = []
        var withCache: [Double] = []
        var sent: [Double] = []
        var indexed: [Double] = []
        for run in 1...runs {
            progress("P8 run \(run)/\(runs): sync after removing .tablesync/")
            withCache.append(try tablesync(["-C", store, "sync", "--json"]).seconds)
            try remove(store + "/.tablesync")
            let sync = try tablesync(["-C", store, "sync", "--json"])
            let push = try JSONParser.parse(sync.standardOutput)["push"]
            sent.append(Double(Self.writes(push)))
            indexed.append(Double(push?["indexedCopies"]?.integerValue ?? -1))
            times.append(sync.seconds)
        }
        let operations = Sample(sent)
        results.rows.append(
            ResultRow(
                id: "P8", what: "sync without .tablesync/ (\(records) records): operations sent", unit: "operations",
                value: operations, target: "0", met: operations.max == 0))
        results.rows.append(
            ResultRow(
                id: "P8", what: "sync without .tablesync/: files indexed without a request (git's word, synced marks)",
                unit: "files",
                value: Sample(indexed), target: "\(records)", met: Sample(indexed).min == Double(records)))
        results.rows.append(
            ResultRow(
                id: "P8", what: "sync without .tablesync/: wall time", unit: "s", value: Sample(times),
                baselineName: "the same sync with its cache", baseline: Sample(withCache), target: nil, met: nil))
    }

    /// What a push report says was written to the server or refused there: operations applied, conflicts, refusals.
    static func writes(_ push: JSONValue?) -> Int64 {
        (push?["applied"]?.integerValue ?? -1) + Int64(push?["conflicts"]?.arrayValue?.count ?? 0)
            + Int64(push?["rejected"]?.arrayValue?.count ?? 0)
    }

    /// The requests a sync's report counts: operations sent, reads made to compare files with the server, pages pulled.
    static func requests(_ sync: JSONValue) -> Int64 {
        let push = sync["push"]
        let pages = sync["pulls"]?.objectValue?.values.reduce(Int64(0)) { $0 + ($1["pages"]?.integerValue ?? 0) } ?? 0
        return (push?["requests"]?.integerValue ?? 0) + (push?["compared"]?["requests"]?.integerValue ?? 0) + pages
    }

    // MARK: - P10

    /// The first sync of a fresh `git clone` of the store after the server changed `changedRecords` records: what it
    /// writes to the server (nothing), the conflicts it files (none), its requests and wall time, beside the sync of
    /// the store it was cloned from, which pulls the same changes. Then what the synced marks cost git: the objects a
    /// commit of those changed files adds, with their marks and without (``MarkCost``).
    private mutating func measureCloneFirstSync(store: String, database: String) async throws {
        let changed = configuration.changedRecords
        let identity = ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"]
        let git = GitWorkTree(directory: store)
        let clone = work + "/clone"
        var measured = CloneFirstSyncRuns()
        // After P7's changes, so that each run's changes are records no earlier run touched.
        let first = min(runs * changed, records - runs * changed)
        for run in 0..<runs {
            progress(
                """
                P10 run \(run + 1)/\(runs): commit, clone, \(changed) records changed on the server, the clone's first \
                sync
                """
            )
            try git.run(["add", "-A"])
            try git.run(identity + ["commit", "-q", "--no-verify", "--allow-empty", "-m", "synced"])
            try discard(clone)
            try ChildProcess.run(
                "/usr/bin/env", ["git", "-c", "gc.auto=0", "clone", "-q", "--no-hardlinks", store, clone])
            if run == 0 { try measureStatusInFreshClone(clone) }
            let indexes = (first + run * changed)..<(first + (run + 1) * changed)
            try await ServerSeeder.touch(
                database: database, table: Self.mainTable, indexes: indexes, dataSet: dataSet,
                value: Int64(8_000_000 + run))
            let cloneSync = try tablesync(["-C", clone, "sync", "--json"])
            let cloneAnswer = try JSONParser.parse(cloneSync.standardOutput)
            try expect(written: changed, in: cloneAnswer, label: "P10 clone")
            measured.addClone(cloneSync, answer: cloneAnswer)

            progress("P10 run \(run + 1)/\(runs): the same changes pulled by the store it was cloned from")
            let before = try MarkCost.files(
                store: store, table: Self.mainTable, names: indexes.map { RecordFileName.fileName(for: dataSet.id($0)) }
            )
            let originSync = try tablesync(["-C", store, "sync", "--json"])
            let originAnswer = try JSONParser.parse(originSync.standardOutput)
            try expect(written: changed, in: originAnswer, label: "P10 origin")
            measured.originRequests.append(Double(Self.requests(originAnswer)))
            measured.originTimes.append(originSync.seconds)
            let after = try MarkCost.files(store: store, table: Self.mainTable, names: before.map(\.name))
            measured.costs.append(
                try MarkCost.growth(before: before, after: after, scratch: work + "/mark-cost", identity: identity))
        }
        try discard(clone)
        results.rows += measured.rows(changed: changed, records: records)
    }

    /// P2 in a fresh clone before its first sync (no `.tablesync/`): `tablesync status` against `git status` in the
    /// same clone, both after a warm-up run. Nothing is edited: every file is the committed one.
    private mutating func measureStatusInFreshClone(_ clone: String) throws {
        let (status, gitSample) = try statusAgainstGit(
            in: clone, edits: 0, label: ": status in a fresh clone before its first sync")
        results.rows.append(
            ResultRow(
                id: "P2", what: "tablesync status in a fresh clone before its first sync (\(records) records)",
                unit: "s", value: status, baselineName: "git status in the same clone", baseline: gitSample,
                target: "≤ 1.0×", met: status.median <= gitSample.median))
        // What that status read: git's index vouches for the clone's files, in the tree the origin's sync recorded.
        let scan = try JSONParser.parse(try tablesync(["-C", clone, "status", "--json"]).standardOutput)["scan"]
        results.rows.append(
            ResultRow(
                id: "P2", what: "status in a fresh clone: record files read of \(records)", unit: "files",
                value: Sample([Double(scan?["read"]?.integerValue ?? -1)]), target: "0",
                met: scan?["read"]?.integerValue == 0))
    }

    /// `runs` timings of `tablesync status` and of `git status` in the work tree `directory`, each run after a warm-up
    /// of both, checking that both list `edits` changes; `label` goes into the progress lines after the run number.
    private func statusAgainstGit(
        in directory: String, edits: Int, label: String
    ) throws -> (status: Sample, git: Sample) {
        let git = GitWorkTree(directory: directory)
        // Warm: both read a warm page cache.
        try git.run(["status", "--porcelain"])
        try tablesync(["-C", directory, "status", "--json"])
        var gitTimes: [Double] = []
        var statusTimes: [Double] = []
        for run in 1...runs {
            progress("P2 run \(run)/\(runs)\(label)")
            let gitStatus = try git.run(["status", "--porcelain"])
            let changed = gitStatus.standardOutput.split(separator: "\n").count
            guard changed == edits else {
                throw BenchError(what: "P2", detail: "git status lists \(changed) changes, expected \(edits)")
            }
            gitTimes.append(gitStatus.seconds)
            let status = try tablesync(["-C", directory, "status", "--json"])
            let found = try JSONParser.parse(status.standardOutput)["handEdits"]?.arrayValue?.count ?? -1
            guard found == edits else {
                throw BenchError(what: "P2", detail: "tablesync status lists \(found) hand edits, expected \(edits)")
            }
            statusTimes.append(status.seconds)
        }
        return (Sample(statusTimes), Sample(gitTimes))
    }

    private func expect(written count: Int, in sync: JSONValue, label: String) throws {
        let written =
            sync["pulls"]?.objectValue?.values.reduce(Int64(0)) { $0 + ($1["written"]?.integerValue ?? 0) } ?? -1
        guard written == Int64(count) else {
            throw BenchError(
                what: label,
                detail:
                    """
                    the sync wrote \(written) pulled records, expected \(count): \
                    \(CanonicalJSON.string(sync).prefix(800))
                    """
            )
        }
    }

    // MARK: - P9

    /// A sync of `busyDiskEdits` hand edits while another process keeps hundreds of megabytes unwritten on the same
    /// file system (``BusyDisk``), against the same sync on the quiet disk; in the same busy moment, the same sync
    /// again with `TABLESYNC_DURABILITY=syncfs` (every durable batch waiting in `syncfs`, as before the store's
    /// ``DurabilityPlan``), the two busy syncs taking turns at going first; then what one durable batch of that many
    /// new files costs with one `syncfs` and with an `fsync` each (``DurableBatchProbe``), busy and quiet.
    private mutating func measureSyncOnBusyDisk(server: ServerProcess) throws {
        let store = work + "/busy-store"
        let probes = work + "/busy-probes"
        let count = min(configuration.busyDiskEdits, configuration.smallRecords)
        try freshStore(store, remote: server.baseURL, table: Self.smallTable)
        try expect(
            try tablesync(["-C", store, "pull", Self.smallTable, "--json"]), member: "written",
            equals: configuration.smallRecords)
        var times: [String: [Double]] = [:]
        var unwritten: [Double] = []
        var probeTimes: [String: [Double]] = [:]
        var value: Int64 = 6_000_000
        func timedSync(_ label: String, environment: [String: String] = [:]) throws {
            value += 1
            let quantity = value
            _ = try editRecords(store: store, table: Self.smallTable, indexes: 0..<count) {
                $0["quantity"] = .integer(quantity)
            }
            let sync = try ChildProcess.run(
                configuration.binaries + "/tablesync", ["-C", store, "sync", "--json"], environment: environment)
            let applied = try JSONParser.parse(sync.standardOutput)["push"]?["applied"]?.integerValue
            guard applied == Int64(count) else {
                throw BenchError(
                    what: "P9", detail: "the sync pushed \(applied.map(String.init) ?? "nothing"), expected \(count)")
            }
            times[label, default: []].append(sync.seconds)
        }
        func probe(_ disk: String) throws {
            for way in DurableBatchProbe.Way.allCases {
                let seconds = try DurableBatchProbe.run(directory: probes, files: count, way: way)
                probeTimes["\(disk) \(way.rawValue)", default: []].append(seconds * 1_000)
            }
        }
        for run in 1...runs {
            progress("P9 run \(run)/\(runs): sync of \(count) hand edits, quiet disk")
            try timedSync("quiet")
            try probe("quiet")
            progress("P9 run \(run)/\(runs): the same on a busy disk, by plan and with syncfs only")
            let neighbour = try BusyDisk.start(
                benchExecutable: configuration.binaries + "/tablesync-bench",
                file: work + "/busy-neighbour.bin", megabytes: configuration.busyDiskMegabytes, seconds: 120)
            defer { neighbour.stop() }
            unwritten.append(
                Double(neighbour.waitForUnwritten(atLeast: configuration.busyDiskMegabytes << 18, seconds: 5))
                    / 1_000_000)
            let ways = [("busy", [String: String]()), ("busy, syncfs only", ["TABLESYNC_DURABILITY": "syncfs"])]
            for (label, environment) in run % 2 == 1 ? ways : ways.reversed() {
                try timedSync(label, environment: environment)
            }
            try probe("busy")
        }
        try discard(store)
        try discard(probes)
        try remove(work + "/busy-neighbour.bin")
        addBusyDiskRows(count: count, times: times, probeTimes: probeTimes, unwritten: unwritten)
    }

    /// P9's rows: the syncs' `times` and the durability probes' `probeTimes` by label, and the megabytes left
    /// `unwritten` as each busy window began.
    private mutating func addBusyDiskRows(
        count: Int, times: [String: [Double]], probeTimes: [String: [Double]], unwritten: [Double]
    ) {
        let quiet = Sample(times["quiet"]!)
        let busy = Sample(times["busy"]!)
        let syncfsOnly = Sample(times["busy, syncfs only"]!)
        let load = String(format: "%.0f", Sample(unwritten).median)
        results.rows.append(
            ResultRow(
                id: "P9", what: "sync of \(count) hand edits, another process keeping ~\(load) MB unwritten", unit: "s",
                value: busy, baselineName: "the same sync on the quiet disk", baseline: quiet,
                target: "≤ 2×", met: busy.median / quiet.median <= 2))
        results.rows.append(
            ResultRow(
                id: "P9", what: "sync of \(count) hand edits, busy disk, TABLESYNC_DURABILITY=syncfs", unit: "s",
                value: syncfsOnly, baselineName: "the same sync, same moment, by plan", baseline: busy,
                target: nil, met: nil))
        for disk in ["busy", "quiet"] {
            results.rows.append(
                ResultRow(
                    id: "P9", what: "\(count) new files made durable, \(disk) disk: an fsync each", unit: "ms",
                    value: Sample(probeTimes["\(disk) fsync each"]!),
                    baselineName: "one syncfs, same disk, same moment",
                    baseline: Sample(probeTimes["\(disk) syncfs"]!), target: nil, met: nil))
        }
        results.notes.append(
            """
            P9: the busy neighbour rewrites \(configuration.busyDiskMegabytes) MB of a file without syncing; unwritten \
            data (Dirty + Writeback) when each busy window started: \
            \(unwritten.map { String(format: "%.0f", $0) }.joined(separator: ", ")) MB
            """
        )
    }

    // MARK: - Helpers

    /// Rewrites the record files of `indexes` in `table` as a person would (plain writes, no fsync), changed by
    /// `change`; returns the records written.
    func editRecords(
        store: String, table: String, indexes: Range<Int>,
        change: (inout [String: JSONValue]) -> Void
    ) throws -> [[String: JSONValue]] {
        var written: [[String: JSONValue]] = []
        for index in indexes {
            let path = recordPath(store: store, table: table, index: index)
            guard let bytes = FileManager.default.contents(atPath: path),
                var record = try JSONParser.parse(Array(bytes)).objectValue
            else {
                throw BenchError(what: "edit", detail: "cannot read \(path)")
            }
            change(&record)
            try Self.writeByHand(CanonicalJSON.encode(.object(record)), to: path)
            written.append(record)
        }
        return written
    }

    /// Writes `bytes` over the file at `path` as an editor saving in place does: truncated, written, closed, not
    /// synced.
    static func writeByHand(_ bytes: [UInt8], to path: String) throws {
        guard let handle = fopen(path, "w") else { throw BenchError(what: "edit", detail: "cannot write \(path)") }
        fwrite(bytes, 1, bytes.count, handle)
        fclose(handle)
    }

    func freshStore(_ path: String, remote: String, table: String) throws {
        try discard(path)
        try tablesync(["-C", path, "init", "--remote", remote, "--table", table])
    }

    @discardableResult
    func tablesync(_ arguments: [String]) throws -> ChildRun {
        try ChildProcess.run(configuration.binaries + "/tablesync", arguments)
    }

    /// Moves `path` out of the way into the work directory's `discarded/`, removed with the work directory after
    /// the run. Deleting 100,000 files between runs would slow the next run's file creation (ext4 skips
    /// recently deleted inodes: `recently_deleted`, `find_inode_bit` fill a profile) and skew its figure.
    func discard(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        let bin = work + "/discarded"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: path, toPath: bin + "/\(UInt64.random(in: 0...UInt64.max))")
    }

    private func remove(_ path: String) throws {
        try ChildProcess.run("/bin/rm", ["-rf", path])
    }

    func expect(_ run: ChildRun, member: String, equals expected: Int) throws {
        let value = try JSONParser.parse(run.standardOutput)[member]?.integerValue
        guard value == Int64(expected) else {
            throw BenchError(
                what: "tablesync",
                detail:
                    """
                    \"\(member)\" is \(value.map(String.init) ?? "missing"), expected \(expected): \
                    \(run.standardOutput.prefix(500))
                    """
            )
        }
    }

    func progress(_ message: String) {
        FileHandle.standardError.write(
            Data("[bench \(String(format: "%6.1f", Clock.now() - startedAt))s] \(message)\n".utf8))
    }
}

/// What the runs of P10 measured: the clone's first syncs and the origin's syncs of the same changes, and what the
/// synced marks cost git.
private struct CloneFirstSyncRuns {
    var cloneTimes: [Double] = []
    var originTimes: [Double] = []
    var cloneRequests: [Double] = []
    var originRequests: [Double] = []
    var cloneWrites: [Double] = []
    var conflicts: [Double] = []
    var costs: [MarkCost.Growth] = []

    /// Notes the clone's first sync, `run`, which answered `answer`.
    mutating func addClone(_ run: ChildRun, answer: JSONValue) {
        cloneWrites.append(Double(BenchmarkSuite.writes(answer["push"])))
        conflicts.append(
            Double(
                (answer["push"]?["conflicts"]?.arrayValue?.count ?? 0)
                    + (answer["push"]?["compared"]?["conflicts"]?.arrayValue?.count ?? 0)))
        cloneRequests.append(Double(BenchmarkSuite.requests(answer)))
        cloneTimes.append(run.seconds)
    }

    /// P10's rows, for `changed` records changed on the server in a table of `records`.
    func rows(changed: Int, records: Int) -> [ResultRow] {
        var rows: [ResultRow] = []
        let writes = Sample(cloneWrites)
        let conflictSample = Sample(conflicts)
        rows.append(
            ResultRow(
                id: "P10", what: "first sync of a clone after \(changed) changes on the server: writes sent",
                unit: "operations",
                value: writes, target: "0", met: writes.max == 0))
        rows.append(
            ResultRow(
                id: "P10", what: "first sync of a clone after \(changed) changes on the server: conflicts",
                unit: "conflicts",
                value: conflictSample, target: "0", met: conflictSample.max == 0))
        rows.append(
            ResultRow(
                id: "P10", what: "first sync of a clone (\(records) records, \(changed) changed): requests",
                unit: "requests",
                value: Sample(cloneRequests), baselineName: "the origin's incremental sync of the same changes",
                baseline: Sample(originRequests), target: nil, met: nil))
        rows.append(
            ResultRow(
                id: "P10", what: "first sync of a clone (\(records) records, \(changed) changed): wall time", unit: "s",
                value: Sample(cloneTimes), baselineName: "the origin's incremental sync of the same changes",
                baseline: Sample(originTimes), target: nil, met: nil))
        rows.append(
            ResultRow(
                id: "P10", what: "git objects a commit of \(changed) pulled record files adds (loose, zlib)",
                unit: "KB",
                value: Sample(costs.map(\.marked.loose)), baselineName: "the same files without their synced marks",
                baseline: Sample(costs.map(\.unmarked.loose)), target: nil, met: nil))
        rows.append(
            ResultRow(
                id: "P10", what: "pack growth of that commit after git repack -adf (deltas)", unit: "KB",
                value: Sample(costs.map(\.marked.packed)), baselineName: "the same files without their synced marks",
                baseline: Sample(costs.map(\.unmarked.packed)), target: nil, met: nil))
        return rows
    }
}
