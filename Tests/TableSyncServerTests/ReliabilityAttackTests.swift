import Foundation
import Synchronization
import SyncProtocol
@testable import TableSyncServer
import Testing
import TableSync
import TestSupport

/// A `tablesync-server` process under an attack mix beside interactive clients, on each database. In one run the
/// interactive clients first work alone on the idle server (the quiet phase), then again while hostile clients
/// attack it: slow connections trickle their heads and bodies, costly `$filter`s at the cost limits run to the
/// statement time limit, clients read pages of large records at `$top=1000`, others send requests pipelined, and a
/// few ask for large pages and do not read them. Then SIGTERM, with the attack and a writer still going.
///
/// Checked: no answer is a 5xx other than a 503 with `Retry-After`, the server exits within its shutdown bound,
/// every write it acknowledged is there when it starts again, and its RSS stays under 512 MB. Printed: the
/// interactive requests' p50 and p99 under attack against the quiet phase's (as ratios), the peak RSS against the
/// idle server's, and the time to exit. `make test` runs a small mix for a few seconds; `make stress`
/// (`TABLESYNC_STRESS=1`) the full one, with the admission of bulk reads at its default and switched off, against a
/// release build of the server as it is deployed (`TABLESYNC_ATTACK_SERVER` names the executable; without it, the
/// build beside the tests).
@Suite("Reliability: server under attack", .serialized)
struct ReliabilityAttackTests {
    /// How many of each client, and for how long.
    struct Mix: Sendable {
        /// Each phase: the quiet one, then the one under attack.
        var phaseSeconds: Double
        /// Interactive clients, each on a kept-alive connection of its own.
        var interactiveClients: Int
        /// How often each interactive client sends a request, as a person's app does: a client that sent requests
        /// back to back would keep the server busy alone, and the phases would measure how the processors are
        /// shared, not how long a request waits.
        var interactiveInterval: Duration
        var slowConnections: Int
        var costlyFilterClients: Int
        var largePageClients: Int
        var pipeliningClients: Int
        /// Clients that ask for a large page and leave it unread for a while.
        var stalledReaders: Int
        /// Records of 100 KB in the large table.
        var largeRecords: Int
        /// `--statement-timeout`, in seconds: where the costly filters end.
        var statementTimeout: Int
        /// `--shutdown-timeout`, in seconds.
        var shutdownTimeout: Int

        static let small = Mix(
            phaseSeconds: 0.5, interactiveClients: 2, interactiveInterval: .milliseconds(20), slowConnections: 10,
            costlyFilterClients: 1,
            largePageClients: 2, pipeliningClients: 1, stalledReaders: 1, largeRecords: 20,
            statementTimeout: 1, shutdownTimeout: 1)
        static let full = Mix(
            phaseSeconds: 20, interactiveClients: 4, interactiveInterval: .milliseconds(20), slowConnections: 200,
            costlyFilterClients: 4,
            largePageClients: 20, pipeliningClients: 4, stalledReaders: 5, largeRecords: 160,
            statementTimeout: 5, shutdownTimeout: 5)
    }

    static let mix = stressRun ? Mix.full : Mix.small
    /// `--max-bulk-reads` of each run: the default, and in `make stress` also so many that every read runs at once.
    static let bulkReadLimits: [Int?] = stressRun ? [nil, 10_000] : [nil]
    static let rssLimit = 512 * 1024 * 1024
    /// The server executable under attack: `TABLESYNC_ATTACK_SERVER`, or the build beside the tests.
    static let serverExecutable = ProcessInfo.processInfo.environment["TABLESYNC_ATTACK_SERVER"].flatMap {
        $0.isEmpty ? nil : $0
    }
    /// What a loaded machine may add to the shutdown bound: with the full mix's, 10 s in all.
    static let exitGrace = Duration.seconds(3)

    @Test(
        """
        interactive clients keep working, memory stays bounded, SIGTERM ends the server in time and no acknowledged \
        write is lost, under an attack mix
        """,
        arguments: Backend.available, bulkReadLimits)
    func attackMix(backend: Backend, maxBulkReads: Int?) async throws {
        let database = try backend.database()
        defer { TestBackend.removeFiles(of: database) }
        let interactive = uniqueTableName("interactive")
        let large = uniqueTableName("large")
        let directory = TemporaryDirectory()
        let arguments =
            [
                "--database", database.urlText, "--table", interactive, "--table", "\(large):maxTop=1000",
                "--statement-timeout", "\(Self.mix.statementTimeout)", "--shutdown-timeout",
                "\(Self.mix.shutdownTimeout)"
            ]
            + (maxBulkReads.map { ["--max-bulk-reads", "\($0)"] } ?? [])
        let server = try await ServerProcess.start(
            arguments, logPath: directory.file("server.log"), executable: Self.serverExecutable)
        let port = try #require(Int(server.baseURL.split(separator: ":").last ?? ""))
        let answers = AnswerLog()
        let interactiveAnswers = AnswerLog()
        let attack = Attack(port: port, interactive: interactive, large: large, answers: answers)
        do {
            try await Self.seed(port: port, interactive: interactive, large: large)
            var processorUse = ProcessorUse(server: server.processIdentifier)
            let quiet = await Self.interactiveLoad(port: port, table: interactive, answers: interactiveAnswers)
            let quietUse = processorUse.restart()
            let idleRSS = ProcessMemory.rss(of: server.processIdentifier)

            let peakRSS = ProcessMemory.Peak(process: server.processIdentifier)
            attack.start()
            // The attack's clients connect and fill the server's queues before the interactive clients measure: a
            // warm-up of the load, not a synchronisation (the measure holds whichever client got there first).
            try await Task.sleep(for: .milliseconds(500))
            processorUse = ProcessorUse(server: server.processIdentifier)
            let underAttack = await Self.interactiveLoad(
                port: port, table: interactive, answers: interactiveAnswers)
            let attackUse = processorUse.restart()

            // Writes in flight when the stop begins, and after: those acknowledged must be kept.
            attack.startWriter()
            // Writes for a while before the stop and on through it; how many were acknowledged before it is
            // whatever it is, and every one of them is checked below.
            try await Task.sleep(for: .milliseconds(300))
            attack.serverIsStopping()
            let started = ContinuousClock.now
            // The exit as the thread that waited for it saw it: a task resumes on the shared pool, which the
            // attack's own clients keep busy, so a clock read after `stop()` returned would time the pool too.
            let (exitStatus, ended) = await server.stopNotingEnd()
            let exit = ended - started
            let rss = peakRSS.stop()
            await attack.stop()

            let acknowledged = answers.acknowledgedIDs.union(interactiveAnswers.acknowledgedIDs)
            let missing = try await Self.missingWrites(
                acknowledged, database: database, table: interactive, large: large,
                directory: directory)
            let (quietAll, attackAll) = (Array(quiet.values.joined()), Array(underAttack.values.joined()))
            let p50 = (quiet: Self.percentile(quietAll, 0.5), underAttack: Self.percentile(attackAll, 0.5))
            let p99 = (quiet: Self.percentile(quietAll, 0.99), underAttack: Self.percentile(attackAll, 0.99))
            let report = Self.report(
                backend: backend, maxBulkReads: maxBulkReads, quiet: quiet, underAttack: underAttack, p50: p50,
                p99: p99,
                processorUse: (quietUse, attackUse), idleRSS: idleRSS, peakRSS: rss, exit: exit, exitStatus: exitStatus,
                attack: attack.summary,
                answers: answers, interactiveAnswers: interactiveAnswers, acknowledged: acknowledged.count)
            print("attack mix: \(report)")
            try AttackResults.append(
                backend: backend, maxBulkReads: maxBulkReads, p50: p50, p99: p99, rss: (idle: idleRSS, peak: rss),
                exit: exit)
            #expect(
                interactiveAnswers.unexpected.isEmpty,
                """
                interactive answers that are 5xx but not a 503 with Retry-After, or none: \
                \(interactiveAnswers.unexpected.prefix(10)); \(report)
                """
            )
            #expect(
                answers.unexpected.isEmpty,
                """
                answers that are 5xx but not a 503 with Retry-After, or none: \(answers.unexpected.prefix(10)); \
                \(report)
                """
            )
            #expect(
                exit <= .seconds(Self.mix.shutdownTimeout) + ServerConfiguration.cancellationTimeout + Self.exitGrace,
                "\(report)\n\(Self.endOfLog(server.log))")
            #expect(missing.isEmpty, "acknowledged writes missing after the restart: \(missing.prefix(10)); \(report)")
            #expect(rss <= Self.rssLimit, "\(report)")
            #expect(attack.ranEveryKind, "every kind of attack ran: \(report)")
        } catch {
            await server.stop()
            await attack.stop()
            throw error
        }
    }

    // MARK: The data

    /// 500 small records in the interactive table; records of 100 KB in the large one, 80 to a page of 8 MiB.
    private static func seed(port: Int, interactive: String, large: String) async throws {
        let small = (0..<500).map {
            BatchOperation(
                kind: .insert, table: interactive,
                item: ["id": .string("n\($0)"), "text": "an interactive record", "n": .integer(Int64($0))])
        }
        try await post(port: port, operations: small)
        let text = String(repeating: "abcd", count: 25_000)
        for batch in stride(from: 0, to: mix.largeRecords, by: 40) {
            try await post(
                port: port,
                operations: (batch..<min(batch + 40, mix.largeRecords)).map {
                    BatchOperation(kind: .insert, table: large, item: ["id": .string("l\($0)"), "text": .string(text)])
                })
        }
    }

    private static func post(port: Int, operations: [BatchOperation]) async throws {
        let body = CanonicalJSON.encode(BatchRequest(operations: operations).json, style: .compact)
        let connection = try #require(RawHTTPConnection(port: port))
        await connection.send(HTTPRequestText.head("POST", "/batch", contentLength: body.count))
        await connection.send(body)
        #expect(await connection.readAnswer(within: 120)?.status == 200)
    }

    // MARK: Interactive clients

    /// Interactive clients for a phase, each on a connection and a thread of its own, a request every
    /// ``Mix/interactiveInterval`` (or at once when the last answer came later), in turn: one record by id, a keyset
    /// page of 20 as TableSync's client pulls, a new record. Returns every request's latency, by kind.
    ///
    /// Each client's thread sends and reads with blocking calls, as an app's HTTP client does on its own thread:
    /// with a thread started per call and tasks between them, the test's own scheduling made most of a request's time
    /// on a quiet server, and grew with the attack's load on the same processors.
    private static func interactiveLoad(
        port: Int, table: String, answers: AnswerLog
    ) async -> [InteractiveKind: [Duration]] {
        await withTaskGroup(of: [InteractiveKind: [Duration]].self) { group in
            for client in 0..<mix.interactiveClients {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        Thread {
                            continuation.resume(
                                returning: interactiveClient(client, port: port, table: table, answers: answers))
                        }.start()
                    }
                }
            }
            var all: [InteractiveKind: [Duration]] = [:]
            for await latencies in group { all.merge(latencies, uniquingKeysWith: +) }
            return all
        }
    }

    /// One interactive client's phase, on the calling thread (see ``interactiveLoad(port:table:answers:)``).
    private static func interactiveClient(
        _ client: Int, port: Int, table: String, answers: AnswerLog
    ) -> [InteractiveKind: [Duration]] {
        var latencies: [InteractiveKind: [Duration]] = [:]
        guard var connection = RawHTTPConnection(port: port) else {
            answers.fault("an interactive client could not connect")
            return latencies
        }
        let end = ContinuousClock.now + .milliseconds(Int64(mix.phaseSeconds * 1000))
        var watermark: PullWatermark?
        var request = 0
        var next = ContinuousClock.now
        while ContinuousClock.now < end {
            // On time, or at once when the last answer came late.
            let wait = next - ContinuousClock.now
            if wait > .zero { usleep(useconds_t(wait / .microseconds(1))) }
            next = max(next + mix.interactiveInterval, ContinuousClock.now)
            request += 1
            let kind = InteractiveKind.allCases[request % 3]
            let (text, written) = interactiveRequest(kind, client: client, table: table, watermark: watermark)
            let sent = ContinuousClock.now
            connection.sendNow(text)
            guard let answer = connection.readAnswerNow(within: 30) else {
                answers.fault("no answer to an interactive request")
                guard let again = RawHTTPConnection(port: port) else { return latencies }
                connection = again
                continue
            }
            latencies[kind, default: []].append(ContinuousClock.now - sent)
            answers.record(answer, acknowledging: written)
            if kind == .page, answer.status == 200 {
                let last = (try? JSONParser.parse(answer.body)["items"]?.arrayValue)??.last
                watermark = last?["updatedAt"]?.stringValue.map {
                    PullWatermark(updatedAt: $0, lastID: last?["id"]?.stringValue)
                }
            }
        }
        return latencies
    }

    /// The text of an interactive request of `kind`, and the id it writes (for an insert).
    private static func interactiveRequest(
        _ kind: InteractiveKind, client: Int, table: String, watermark: PullWatermark?
    ) -> (text: String, written: String?) {
        switch kind {
        case .insert:
            let id = "w\(client)-\(UUID().uuidString.prefix(8))"
            return (HTTPRequestText.post(table, id: id), id)
        case .read:
            return (HTTPRequestText.head("GET", "/tables/\(table)/n\(Int.random(in: 0..<500))"), nil)
        case .page:
            let query = PullPlan.query(mode: .keyset, baseFilter: nil, watermark: watermark, skip: 0, pageSize: 20)
                .map { "\($0.name)=\(TablePath.percentEncodeQueryComponent($0.value))" }.joined(separator: "&")
            return (HTTPRequestText.head("GET", "/tables/\(table)?\(query)"), nil)
        }
    }

    /// The requests an interactive client sends, in turn.
    enum InteractiveKind: String, CaseIterable {
        case insert, read, page
    }

    // MARK: After the stop

    /// The acknowledged writes that a server started again on the same database does not hold.
    private static func missingWrites(
        _ acknowledged: Set<String>, database: DatabaseLocation, table: String, large: String,
        directory: TemporaryDirectory
    ) async throws -> [String] {
        let server = try await ServerProcess.start(
            ["--database", database.urlText, "--table", table, "--table", large],
            logPath: directory.file("restarted.log"))
        let stored: Set<String>
        do {
            stored = try await storedIDs(
                port: try #require(Int(server.baseURL.split(separator: ":").last ?? "")), table: table)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        return acknowledged.subtracting(stored).sorted()
    }

    /// The ids of every record of `table`, deleted ones included.
    private static func storedIDs(port: Int, table: String) async throws -> Set<String> {
        let connection = try #require(RawHTTPConnection(port: port))
        var ids: Set<String> = []
        while true {
            await connection.send(
                HTTPRequestText.head(
                    "GET", "/tables/\(table)?__includeDeleted=true&$orderby=id&$top=1000&$skip=\(ids.count)"))
            let answer = try #require(await connection.readAnswer(within: 60))
            try #require(answer.status == 200, "\(answer.text.prefix(200))")
            let page = try JSONParser.parse(answer.body)
            ids.formUnion((page["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
            if page["nextLink"] == .null { return ids }
        }
    }

    /// Where a server's log tells why it ended: from the first line of a crash report, or its last lines.
    private static func endOfLog(_ log: String) -> String {
        guard let crash = log.range(of: "Fatal error") ?? log.range(of: "Program crashed") else {
            return String(log.suffix(3000))
        }
        return String(log[crash.lowerBound...].prefix(6000))
    }

    // MARK: The figures

    private static func report(
        backend: Backend, maxBulkReads: Int?, quiet byKind: [InteractiveKind: [Duration]],
        underAttack attackByKind: [InteractiveKind: [Duration]], p50: (quiet: Duration, underAttack: Duration),
        p99: (quiet: Duration, underAttack: Duration),
        processorUse: (quiet: ProcessorUse.Cores, underAttack: ProcessorUse.Cores), idleRSS: Int, peakRSS: Int,
        exit: Duration, exitStatus: Int32, attack: String, answers: AnswerLog, interactiveAnswers: AnswerLog,
        acknowledged: Int
    ) -> String {
        let (quietCount, attackCount) = (byKind.values.joined().count, attackByKind.values.joined().count)
        let kinds = InteractiveKind.allCases.compactMap { kind -> String? in
            let (before, during) = (byKind[kind] ?? [], attackByKind[kind] ?? [])
            guard !before.isEmpty, !during.isEmpty else { return nil } // a phase too short on a loaded machine
            return """
                \(kind.rawValue) p50 \(ratio(percentile(during, 0.5), percentile(before, 0.5))), \
                p99 \(ratio(percentile(during, 0.99), percentile(before, 0.99)))
                """
        }
        return """
            \(backend), --max-bulk-reads \(maxBulkReads.map(String.init) ?? "default"), server \
            \(serverExecutable ?? "beside the tests"): interactive requests quiet \
            \(quietCount) \
            (p50 \(milliseconds(p50.quiet)), p99 \(milliseconds(p99.quiet))), under attack \(attackCount) \
            (p50 \(milliseconds(p50.underAttack)), p99 \(milliseconds(p99.underAttack))): p50 \
            \(ratio(p50.underAttack, p50.quiet)), p99 \(ratio(p99.underAttack, p99.quiet)) \
            (\(kinds.joined(separator: "; "))); processor cores used quiet \
            \(processorUse.quiet), under attack \
            \(processorUse.underAttack); RSS idle \(idleRSS / 1_000_000) MB, peak under attack \
            \(peakRSS / 1_000_000) MB \
            (\(String(format: "%.2f", Double(peakRSS) / Double(max(1, idleRSS))))×); exit \(milliseconds(exit)) after \
            SIGTERM \
            (status \(exitStatus)); \(acknowledged) writes acknowledged; interactive answers \
            \(interactiveAnswers.statusSummary), \
            others \(answers.statusSummary); attack: \(attack)
            """
    }

    static func percentile(_ values: [Duration], _ fraction: Double) -> Duration {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .zero }
        return sorted[max(0, min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1))]
    }

    private static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.1f ms", duration / .milliseconds(1))
    }

    private static func ratio(_ value: Duration, _ base: Duration) -> String {
        String(format: "%.2f×", value / max(base, .nanoseconds(1)))
    }
}

/// The figures of each attack run, added to the results file `TABLESYNC_ATTACK_RESULTS` names (`make stress` names
/// `bench-results/attack.json`) in the format of `tablesync-bench`'s results, so that `scripts/bench-docs.sh` writes
/// them into docs/bench.md: its table comes from a run, never typed. Nothing is written without the variable.
enum AttackResults {
    static func append(
        backend: Backend, maxBulkReads: Int?, p50: (quiet: Duration, underAttack: Duration),
        p99: (quiet: Duration, underAttack: Duration), rss: (idle: Int, peak: Int), exit: Duration
    ) throws {
        guard let path = ProcessInfo.processInfo.environment["TABLESYNC_ATTACK_RESULTS"], !path.isEmpty else { return }
        var results: [String: JSONValue] = [:]
        if let bytes = FileManager.default.contents(atPath: path),
            case .object(let read) = try JSONParser.parse(
                Array(bytes))
        {
            results = read
        }
        let run = "\(backend), \(maxBulkReads.map { "--max-bulk-reads \($0)" } ?? "bulk reads in turns")"
        let milliseconds = { (duration: Duration) in duration / .milliseconds(1) }
        let p99Ratio = milliseconds(p99.underAttack) / max(milliseconds(p99.quiet), 1e-9)
        let rows: [JSONValue] = [
            row(
                "\(run): interactive p50 under attack", unit: "ms", milliseconds(p50.underAttack),
                baseline: ("the quiet phase", milliseconds(p50.quiet))),
            row(
                "\(run): interactive p99 under attack", unit: "ms", milliseconds(p99.underAttack),
                baseline: ("the quiet phase", milliseconds(p99.quiet)),
                target: maxBulkReads == nil ? ("≤ 2×", p99Ratio <= 2) : nil),
            row(
                "\(run): highest RSS", unit: "MiB", Double(rss.peak) / 1_048_576,
                baseline: ("the idle server", Double(rss.idle) / 1_048_576),
                target: ("≤ 512 MiB", rss.peak <= ReliabilityAttackTests.rssLimit)),
            row(
                "\(run): exit after SIGTERM", unit: "s", exit / .seconds(1),
                target: ("≤ 10 s", exit <= .seconds(10)))
        ]
        results["rows"] = .array((results["rows"]?.arrayValue ?? []) + rows)
        results["machine"] = .string("\(ProcessInfo.processInfo.activeProcessorCount) cores")
        results["date"] = .string(Date().formatted(.iso8601))
        results["notes"] = results["notes"] ?? .array([])
        try Data(CanonicalJSON.encode(.object(results))).write(to: URL(fileURLWithPath: path))
    }

    private static func row(
        _ what: String, unit: String, _ value: Double, baseline: (name: String, value: Double)? = nil,
        target: (text: String, met: Bool)? = nil
    ) -> JSONValue {
        func sample(_ value: Double) -> JSONValue {
            ["median": .double(value), "min": .double(value), "max": .double(value), "values": [.double(value)]]
        }
        var row: [String: JSONValue] = [
            "id": "S1", "what": .string(what), "unit": .string(unit), "value": sample(value)
        ]
        if let baseline {
            row["baselineName"] = .string(baseline.name)
            row["baseline"] = sample(baseline.value)
            row["ratio"] = .double(value / max(baseline.value, 1e-9))
        }
        if let target {
            row["target"] = .string(target.text)
            row["met"] = .bool(target.met)
        }
        return .object(row)
    }
}

/// `TABLESYNC_STRESS=1`: the run of `make stress`.
private let stressRun: Bool = {
    let value = ProcessInfo.processInfo.environment["TABLESYNC_STRESS"] ?? ""
    return !value.isEmpty && value != "0"
}()

/// Requests as raw text, as the attack's clients write them.
private enum HTTPRequestText {
    static func head(_ method: String, _ target: String, contentLength: Int? = nil) -> String {
        "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\n"
            + (contentLength.map { "Content-Type: application/json\r\nContent-Length: \($0)\r\n" } ?? "") + "\r\n"
    }

    /// An insert of a small record `id` into `table`.
    static func post(_ table: String, id: String) -> String {
        let body = "{\"id\":\"\(id)\",\"text\":\"written\"}"
        return head("POST", "/tables/\(table)", contentLength: body.utf8.count) + body
    }
}

/// Every answer the clients got, and the writes acknowledged.
private final class AnswerLog: Sendable {
    private struct State {
        var statuses: [Int: Int] = [:]
        var unexpected: [String] = []
        var acknowledged: Set<String> = []
    }
    private let state = Mutex(State())

    /// Counts `answer`; a 5xx other than a 503 with `Retry-After` is unexpected. A 201 acknowledges `written`.
    func record(_ answer: RawHTTPConnection.Answer, acknowledging written: String? = nil) {
        state.withLock { state in
            state.statuses[answer.status, default: 0] += 1
            if answer.status >= 500, answer.status != 503 || answer.header("retry-after") == nil {
                state.unexpected.append("\(answer.status) \(answer.text.prefix(200))")
            }
            if answer.status == 201, let written { state.acknowledged.insert(written) }
        }
    }

    /// A request that got no answer where one was owed, or a wrong one.
    func fault(_ description: String) {
        state.withLock { $0.unexpected.append(description) }
    }

    var unexpected: [String] { state.withLock { $0.unexpected } }
    var acknowledgedIDs: Set<String> { state.withLock { $0.acknowledged } }

    /// `status×count`, by status.
    var statusSummary: String {
        state.withLock { $0.statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " ") }
    }
}

/// The attack: each hostile client a task of its own, from ``start()`` until ``stop()``; and a writer that inserts
/// records from ``startWriter()`` on to the server's exit.
private final class Attack: Sendable {
    private struct Counts {
        var slowConnections = 0
        var costlyFiltersSent = 0
        var costlyFilters = 0
        var largePagesSent = 0
        var largePageAnswers = 0
        var largePages = 0
        var pipelinedRoundsSent = 0
        var pipelinedRounds = 0
        var stalledPages = 0
    }

    private let port: Int
    private let interactive: String
    private let large: String
    private let answers: AnswerLog
    private let counts = Mutex(Counts())
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let stopping = Mutex(false)
    private let serverStopping = Mutex(false)

    init(port: Int, interactive: String, large: String, answers: AnswerLog) {
        self.port = port
        self.interactive = interactive
        self.large = large
        self.answers = answers
    }

    var summary: String {
        counts.withLock {
            """
            \($0.slowConnections) slow connections, \($0.costlyFilters) costly filters answered, \
            \($0.largePageAnswers) large pages answered (\($0.largePages) with 200), \($0.pipelinedRounds) of \
            \($0.pipelinedRoundsSent) pipelined rounds of 4 answered, \($0.stalledPages) large pages left unread
            """
        }
    }

    var ranEveryKind: Bool {
        counts.withLock {
            $0.slowConnections > 0 && $0.costlyFiltersSent > 0 && $0.largePagesSent > 0 && $0.pipelinedRoundsSent > 0
                && $0.stalledPages > 0
        }
    }

    private var isStopping: Bool { stopping.withLock { $0 } }

    /// The server is about to get SIGTERM: from now on connections may end without the answers they are owed.
    func serverIsStopping() {
        serverStopping.withLock { $0 = true }
    }

    /// Reports `description` unless the server is stopping, when it is expected.
    private func fault(_ description: String) {
        if !serverStopping.withLock({ $0 }) { answers.fault(description) }
    }

    func start() {
        let mix = ReliabilityAttackTests.mix
        var started: [Task<Void, Never>] = []
        for index in 0..<mix.slowConnections {
            started.append(Task { await self.slowConnection(sendingBody: index % 4 == 3) })
        }
        for _ in 0..<mix.costlyFilterClients { started.append(Task { await self.costlyFilters() }) }
        for _ in 0..<mix.largePageClients { started.append(Task { await self.largePages() }) }
        for _ in 0..<mix.pipeliningClients { started.append(Task { await self.pipelined() }) }
        for _ in 0..<mix.stalledReaders { started.append(Task { await self.stalledReader() }) }
        tasks.withLock { $0 += started }
    }

    func startWriter() {
        let writer = Task { await self.writer() }
        tasks.withLock { $0.append(writer) }
    }

    /// Ends every client and waits for them.
    func stop() async {
        stopping.withLock { $0 = true }
        let running = tasks.withLock { $0 }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }

    /// A connection again after the last one ended, or `nil` once the attack stops; waits while the server refuses.
    private func reconnect() async -> RawHTTPConnection? {
        while !isStopping {
            if let connection = RawHTTPConnection(port: port) { return connection }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return nil
    }

    /// A head (or, with `sendingBody`, a body) sent one byte a second; the server ends it at its header (body) timeout.
    private func slowConnection(sendingBody: Bool) async {
        let text =
            sendingBody
            ? HTTPRequestText.head("POST", "/tables/\(interactive)", contentLength: 100_000)
                + "{\"id\":\"slow\",\"text\":\""
            : "GET /tables/\(large) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\nX-Padding: "
                + String(repeating: "a", count: 100_000)
        let bytes = Array(text.utf8)
        while let connection = await reconnect() {
            counts.withLock { $0.slowConnections += 1 }
            var sent = sendingBody ? bytes.count - 16 : 0
            if sendingBody { await connection.send(Array(bytes[0..<sent])) }
            while !isStopping, sent < bytes.count, await connection.send([bytes[sent]]) {
                sent += 1
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// `$filter`s at the cost limits (growth 16, hundreds of terms) on the large records: each runs to the statement
    /// time limit, or waits its turn and is refused.
    private func costlyFilters() async {
        let filter = AbandonedRequestTests.filter(chains: 20)
        let request = HTTPRequestText.head(
            "GET", "/tables/\(large)?$filter=\(TablePath.percentEncodeQueryComponent(filter))")
        while let connection = await reconnect() {
            while !isStopping, await connection.send(request) {
                counts.withLock { $0.costlyFiltersSent += 1 }
                guard let answer = await connection.readAnswer(within: 60) else { break }
                answers.record(answer)
                counts.withLock { $0.costlyFilters += 1 }
            }
        }
    }

    /// Pages of the large table at `$top=1000`, each ended by the page byte limit, followed to the end and again.
    private func largePages() async {
        let first = "/tables/\(large)?$top=1000"
        var target = first
        while let connection = await reconnect() {
            while !isStopping, await connection.send(HTTPRequestText.head("GET", target)) {
                counts.withLock { $0.largePagesSent += 1 }
                guard let answer = await connection.readAnswer(within: 60, keepingLast: Self.pageTail) else { break }
                answers.record(answer)
                counts.withLock { $0.largePageAnswers += 1 }
                // A 4xx is a request the server could not read (a next page's target built wrong, as once when the
                // `nextLink` became a query string alone): no load at all, where the attack means one. A 503 is a
                // bulk read refused its turn, as the design has it.
                if (400..<500).contains(answer.status) {
                    fault("a large page answered \(answer.status) to \(target): \(answer.text.prefix(200))")
                }
                guard answer.status == 200 else { continue }
                counts.withLock { $0.largePages += 1 }
                target = Self.nextLink(inEndOf: answer.body).map { "/tables/\(large)?\($0)" } ?? first
            }
        }
    }

    /// Four requests sent at once, before any answer: an insert, a read of it, a large page and a small one. Their
    /// answers must come in order.
    private func pipelined() async {
        while let connection = await reconnect() {
            while !isStopping {
                let id = "p-\(UUID().uuidString.prefix(8))"
                let requests =
                    HTTPRequestText.post(interactive, id: id)
                    + HTTPRequestText.head("GET", "/tables/\(interactive)/\(id)")
                    + HTTPRequestText.head("GET", "/tables/\(large)?$top=1000")
                    + HTTPRequestText.head("GET", "/tables/\(interactive)?$top=5")
                guard await connection.send(requests) else { break }
                counts.withLock { $0.pipelinedRoundsSent += 1 }
                var received: [RawHTTPConnection.Answer] = []
                for index in 0..<4 {
                    let tail = index == 2 ? Self.pageTail : .max // the large page: its status is what counts
                    guard let answer = await connection.readAnswer(within: 60, keepingLast: tail) else { break }
                    answers.record(answer, acknowledging: received.isEmpty ? id : nil)
                    received.append(answer)
                }
                guard received.count == 4 else {
                    fault("no answer to pipelined request \(received.count + 1) of 4")
                    break
                }
                if received[0].status == 201, received[1].status != 200 || !received[1].text.contains(id) {
                    answers.fault(
                        """
                        the read of \(id) after its pipelined insert: \(received[1].status) \
                        \(received[1].text.prefix(200))
                        """
                    )
                }
                counts.withLock { $0.pipelinedRounds += 1 }
            }
        }
    }

    /// A large page asked for and left unread for 5 s, then the connection closed.
    private func stalledReader() async {
        while let connection = await reconnect() {
            await connection.send(HTTPRequestText.head("GET", "/tables/\(large)?$top=1000"))
            counts.withLock { $0.stalledPages += 1 }
            for _ in 0..<50 where !isStopping { try? await Task.sleep(for: .milliseconds(100)) }
            connection.closeSocket()
        }
    }

    /// Inserts records one after the other until the server is gone: writes acknowledged during its shutdown too.
    private func writer() async {
        while let connection = await reconnect() {
            while !isStopping {
                let id = "s-\(UUID().uuidString.prefix(8))"
                guard await connection.send(HTTPRequestText.post(interactive, id: id)),
                    let answer = await connection.readAnswer(within: 60)
                else { break }
                answers.record(answer, acknowledging: id)
            }
        }
    }

    /// The bytes of a large page that its reader keeps: its end, where the `nextLink` is.
    static let pageTail = 4096

    /// The `nextLink` of a v3 page, read from its last bytes (canonical JSON puts it after the items): parsing eight
    /// megabytes a page would load the test's own processor more than the server's.
    static func nextLink(inEndOf body: [UInt8]) -> String? {
        let tail = String(decoding: body.suffix(pageTail), as: UTF8.self)
        guard let start = tail.range(of: "\"nextLink\":\"") else { return nil }
        return String(tail[start.upperBound...].prefix { $0 != "\"" })
    }
}

/// The processors the server and the test process used over a phase: what tells the server's own load from the load
/// the test's clients put on the same machine.
struct ProcessorUse {
    /// Processor seconds per second of the phase (1.0 is one core busy all along).
    struct Cores: CustomStringConvertible {
        var server: Double
        var test: Double
        var description: String { String(format: "server %.2f, test %.2f", server, test) }
    }

    private let server: Int32
    private var started = ContinuousClock.now
    private var serverTime: Double
    private var testTime: Double

    init(server: Int32) {
        self.server = server
        serverTime = Self.processorTime(of: server)
        testTime = Self.processorTime(of: getpid())
    }

    /// The processor time (user and system) process `pid` has used, in seconds (`/proc/PID/stat`).
    static func processorTime(of pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The cores used since the start (or the last restart), and a restart from now.
    mutating func restart() -> Cores {
        let now = ContinuousClock.now
        let elapsed = max((now - started) / .seconds(1), 1e-9)
        let (serverNow, testNow) = (
            Self.processorTime(of: server), Self.processorTime(of: getpid())
        )
        defer { (started, serverTime, testTime) = (now, serverNow, testNow) }
        return Cores(server: (serverNow - serverTime) / elapsed, test: (testNow - testTime) / elapsed)
    }
}

/// A process's resident memory, read from `/proc/PID/status`.
enum ProcessMemory {
    /// The RSS of `pid` now, in bytes.
    static func rss(of pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }

    /// The highest RSS of a process, sampled every 50 ms on a thread of its own until ``stop()``.
    final class Peak: Sendable {
        private let state = Mutex((running: true, peak: 0))

        init(process: Int32) {
            Thread { [self] in
                while state.withLock({ $0.running }) {
                    let rss = ProcessMemory.rss(of: process)
                    state.withLock { $0.peak = max($0.peak, rss) }
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }.start()
        }

        /// Stops sampling; returns the highest RSS seen, in bytes.
        func stop() -> Int {
            state.withLock { state in
                state.running = false
                return state.peak
            }
        }
    }
}
