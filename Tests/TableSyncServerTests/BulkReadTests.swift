import Foundation
import Synchronization
import SyncProtocol
@testable import TableSyncServer
import TableSync
import Testing
import TestSupport

/// Bulk reads take turns: which reads are bulk (``ReadWeight``), how ``ReadAdmission`` hands out its turns, and what
/// a live server on each database answers while bulk reads wait.
@Suite("Bulk reads")
struct BulkReadTests {
    @Test(
        "which page reads are bulk",
        arguments: [
            ("", false),
            ("$top=100", false),
            ("$top=101", true),
            ("$top=1000&$filter=updatedAt gt datetimeoffset'2024-01-01T00:00:00Z'", true),
            ("$top=50&$filter=updatedAt gt datetimeoffset'2024-01-01T00:00:00Z' and id gt 'a'", false),
            ("$top=50&$filter=text eq 'a' or n in (1, 2)", false),
            ("$top=50&$filter=not startswith(text, 'a')", true),
            ("$top=50&$filter=n in (1, length(text))", true),
            ("$top=10&$filter=year(createdAt) eq 2024", true),
            ("$top=10&$filter=n add 1 gt 2", false),
            ("$top=10&$orderby=text", true),
            ("$top=10&$orderby=deleted", true),
            ("$top=10&$orderby=createdAt,updatedAt", true),
            ("$top=10&$orderby=updatedAt desc,id asc", true),
            ("$top=10&$orderby=createdAt desc", false),
            ("$top=10&$orderby=updatedAt desc,id desc", false),
            ("$top=10&$orderby=updatedAt,id", false),
            ("$top=10&$orderby=id desc,text", false)
        ])
    func readWeight(query: String, bulk: Bool) throws {
        let parsed = try ListQuery.parse(QueryString(query), version: .v2, table: TableOptions(name: "todo"))
        #expect(ReadWeight.isBulk(parsed) == bulk)
    }

    /// Stands for the attack mix's large-page clients (ReliabilityAttackTests): a v3 client without the whole-pages
    /// extension that asks for `$top=1000` of 100 KB records is served pages of the table's page size, each 8 MiB.
    /// When such pages did not count as bulk, twenty of those clients held every SQLite reader, and the interactive
    /// reads' p50 under attack went from 0.8× the quiet phase's to 320×.
    @Test(
        "v3 serves a large $top a page at a time: each page of it is bulk, as the read is",
        arguments: [("$top=1000", true), ("$top=101", true), ("$top=100", false), ("", false), ("$top=20", false)])
    func cappedPages(query: String, bulk: Bool) throws {
        let parsed = try ListQuery.parse(
            QueryString(query), version: .v3, table: TableOptions(name: "todo", pageSize: 100))
        #expect(parsed.top <= 100, "v3 serves at most the page size")
        #expect(ReadWeight.isBulk(parsed) == bulk)
    }

    @Test(
        "a declared column's order is served by its index when id follows in its direction (ascending if not named)",
        arguments: [
            ("rank", false), ("rank desc,id desc", false), ("rank desc", true), ("rank,id desc", true),
            ("rank,text", true)
        ])
    func declaredOrder(orderBy: String, bulk: Bool) throws {
        let table = try TableOptions(name: "todo", schema: TableSchema(parsing: "rank:number;text:string"))
        let parsed = try ListQuery.parse(QueryString("$top=10&$orderby=\(orderBy)"), version: .v2, table: table)
        #expect(ReadWeight.isBulk(parsed) == bulk)
    }

    @Test("a table whose default page is large makes every read without $top a bulk read")
    func largeDefaultPage() throws {
        let parsed = try ListQuery.parse(
            QueryString(""), version: .v3, table: TableOptions(name: "todo", pageSize: 500))
        #expect(ReadWeight.isBulk(parsed))
    }

    // MARK: Admission

    /// Reads that hold their turn for a while or until released, and what the admission let them do meanwhile.
    private final class Reads: Sendable {
        private struct State {
            var running = 0
            var mostAtOnce = 0
            var order: [Int] = []
            var released = false
        }
        private let state = Mutex(State())

        /// The most reads that ran at once.
        var mostAtOnce: Int { state.withLock { $0.mostAtOnce } }
        /// The indexes of the reads that started, in the order they started.
        var order: [Int] { state.withLock { $0.order } }

        /// A read that runs for `duration`, or until ``release()`` without one.
        func read(_ index: Int = 0, for duration: Duration? = nil) async throws {
            state.withLock { state in
                state.running += 1
                state.mostAtOnce = max(state.mostAtOnce, state.running)
                state.order.append(index)
            }
            defer { state.withLock { $0.running -= 1 } }
            if let duration {
                try await Task.sleep(for: duration)
            } else {
                while !state.withLock({ $0.released }) { try await Task.sleep(for: .milliseconds(5)) }
            }
        }

        /// Ends the reads that run until released, and those that start later at once.
        func release() { state.withLock { $0.released = true } }

        /// Waits until `count` reads have started.
        func waitForStarts(_ count: Int) async throws {
            while state.withLock({ $0.order.count }) < count { try await Task.sleep(for: .milliseconds(5)) }
        }
    }

    /// Waits (at most 10 s) until `count` reads wait for their turn, as `metrics` counts them.
    private static func waitForWaiting(
        _ count: Int, _ metrics: ServerMetrics, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var waiting: Double?
        for _ in 0..<2000 {
            waiting = MetricsTests.value(
                MetricsTests.samples(String(decoding: metrics.exposition(), as: UTF8.self)),
                "tablesync_bulk_reads_waiting")
            if waiting == Double(count) { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("\(waiting.map { "\($0)" } ?? "no") reads wait, not \(count)", sourceLocation: sourceLocation)
    }

    @Test("at most the limit of reads run at once; the others wait")
    func limitHolds() async throws {
        let metrics = ServerMetrics()
        let admission = ReadAdmission(limit: 2, metrics: metrics)
        let reads = Reads()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<6 {
                group.addTask { try await admission.run(waitingAtMost: .seconds(60)) { try await reads.read(index) } }
            }
            try await reads.waitForStarts(2)
            try await Self.waitForWaiting(4, metrics)
            #expect(reads.mostAtOnce == 2)
            reads.release()
            try await group.waitForAll()
        }
        #expect(reads.mostAtOnce == 2)
        #expect(reads.order.count == 6)
    }

    @Test("waiting reads run in the order they came")
    func orderOfArrival() async throws {
        let metrics = ServerMetrics()
        let admission = ReadAdmission(limit: 1, metrics: metrics)
        let reads = Reads()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await admission.run(waitingAtMost: .seconds(60)) { try await reads.read(0) } }
            try await reads.waitForStarts(1)
            for index in 1...5 {
                group.addTask { try await admission.run(waitingAtMost: .seconds(60)) { try await reads.read(index) } }
                try await Self.waitForWaiting(index, metrics)
            }
            reads.release()
            try await group.waitForAll()
        }
        #expect(reads.order == Array(0...5))
    }

    @Test("a read that waits longer than it may is refused 503 with Retry-After and counted; the queue moves on")
    func waitIsBounded() async throws {
        let metrics = ServerMetrics()
        let admission = ReadAdmission(limit: 1, metrics: metrics)
        let reads = Reads()
        let holder = Task { try await admission.run(waitingAtMost: .seconds(60)) { try await reads.read() } }
        try await reads.waitForStarts(1)
        // The holder keeps its turn until released below: only the bound can end this wait.
        let refusal = await #expect(throws: ProtocolError.self) {
            try await admission.run(waitingAtMost: .milliseconds(100)) {
                _ = Issue.record("ran while the turn was taken")
            }
        }
        #expect(refusal?.status == .serviceUnavailable && refusal?.retryAfterSeconds == 1)
        #expect(refusal?.message.contains("retry later") == true)
        let scrape = MetricsTests.samples(String(decoding: metrics.exposition(), as: UTF8.self))
        #expect(MetricsTests.value(scrape, "tablesync_bulk_reads_refused_total") == 1)
        #expect(MetricsTests.value(scrape, "tablesync_bulk_reads_waiting") == 0)
        reads.release()
        try await holder.value
        try await admission.run(waitingAtMost: .milliseconds(100)) {}
    }

    @Test("a waiting read whose task is cancelled leaves the queue at once and never runs; its turn goes to the next")
    func cancelledWaiterLeaves() async throws {
        let metrics = ServerMetrics()
        let admission = ReadAdmission(limit: 1, metrics: metrics)
        let reads = Reads()
        let holder = Task { try await admission.run(waitingAtMost: .seconds(60)) { try await reads.read(0) } }
        try await reads.waitForStarts(1)
        let cancelled = Task {
            try await admission.run(waitingAtMost: .seconds(60)) { _ = Issue.record("a cancelled read ran") }
        }
        try await Self.waitForWaiting(1, metrics)
        let next = Task { try await admission.run(waitingAtMost: .seconds(60)) { try await reads.read(1) } }
        try await Self.waitForWaiting(2, metrics)
        let cancelledAt = ContinuousClock.now
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(
            ContinuousClock.now - cancelledAt < .seconds(30), "left the queue when cancelled, not at its bound of 60 s")
        try await Self.waitForWaiting(1, metrics)
        reads.release()
        try await holder.value
        try await next.value
        #expect(reads.order == [0, 1])
    }

    @Test("a read already cancelled when it asks never runs, and takes no turn")
    func cancelledBeforeAsking() async throws {
        let admission = ReadAdmission(limit: 1, metrics: ServerMetrics())
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await admission.run(waitingAtMost: .seconds(60)) { _ = Issue.record("a cancelled read ran") }
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        var ran = false
        try await admission.run(waitingAtMost: .milliseconds(100)) { ran = true }
        #expect(ran, "the turn is free")
    }

    @Test("a read that fails gives its turn back")
    func failingReadGivesBack() async throws {
        struct Failure: Error {}
        let admission = ReadAdmission(limit: 1, metrics: ServerMetrics())
        await #expect(throws: Failure.self) { try await admission.run(waitingAtMost: .seconds(1)) { throw Failure() } }
        try await admission.run(waitingAtMost: .milliseconds(100)) {}
    }

    @Test("no turn is lost or given twice when deadlines, cancellations and hand-overs race")
    func racingTurns() async throws {
        let metrics = ServerMetrics()
        let admission = ReadAdmission(limit: 2, metrics: metrics)
        let reads = Reads()
        var generator = SeededGenerator(seed: 29)
        let plans = (0..<400).map { _ in
            (
                wait: Duration.microseconds(Int64.random(in: 0...3000, using: &generator)),
                cancelAfter: Bool.random(using: &generator)
                    ? Duration.microseconds(Int64.random(in: 0...3000, using: &generator)) : nil
            )
        }
        await withTaskGroup(of: Void.self) { group in
            for plan in plans {
                group.addTask {
                    let read = Task {
                        try await admission.run(waitingAtMost: plan.wait) {
                            try await reads.read(for: .microseconds(500))
                        }
                    }
                    if let cancelAfter = plan.cancelAfter {
                        try? await Task.sleep(for: cancelAfter)
                        read.cancel()
                    }
                    _ = await read.result
                }
            }
        }
        #expect(reads.mostAtOnce <= 2)
        try await Self.waitForWaiting(0, metrics)
        // Exactly two turns are left: two reads run together, a third waits for them.
        let after = Reads()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<3 {
                group.addTask { try await admission.run(waitingAtMost: .seconds(60)) { try await after.read(index) } }
            }
            try await after.waitForStarts(2)
            try await Self.waitForWaiting(1, metrics)
            after.release()
            try await group.waitForAll()
        }
        #expect(after.mostAtOnce == 2)
    }

    // MARK: Over HTTP

    @Test(
        """
        over HTTP: small reads pass waiting bulk reads, a wait ends in 503 with Retry-After, a client that leaves \
        leaves the queue
        """,
        arguments: Backend.available)
    func overHTTP(backend: Backend) async throws {
        let table = uniqueTableName()
        let database = try backend.database()
        defer { TestBackend.removeFiles(of: database) }
        // A process of its own, so that the tests running beside this one do not hold up its requests. The statement
        // time limit bounds the reads and their waits. At 1.5 s, a debug server on a machine loaded by the whole
        // suite once learnt of the leaving client only after its wait had ended in a refusal; 5 s leaves it 4.8 s.
        let directory = TemporaryDirectory()
        let server = try await ServerProcess.start(
            [
                "--database", database.urlText, "--table", "\(table):pageSize=200", "--max-bulk-reads", "1",
                "--statement-timeout", "5"
            ],
            logPath: directory.file("server.log"))
        do {
            try await Self.checkTurns(
                port: try #require(Int(server.baseURL.split(separator: ":").last ?? "")), table: table)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Bulk reads queueing on a server that runs one at a time, each for at most 5 s, and the requests beside them.
    /// What is checked holds however late this test's own tasks run on a busy machine: the server's figures say what
    /// waited.
    private static func checkTurns(port: Int, table: String) async throws {
        try await Self.seed(port: port, table: table)
        // Far longer than the limit on either database: each evaluation builds strings of 320 KB.
        let filter = TablePath.percentEncodeQueryComponent(AbandonedRequestTests.filter(chains: 20))
        let costly =
            "GET /tables/\(table)?$filter=\(filter) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\n\r\n"
        let reads = try (0..<3).map { _ in try #require(RawHTTPConnection(port: port)) }
        let leaving = try #require(RawHTTPConnection(port: port))
        // Sent together: one read takes the turn and runs to the limit, the next runs after it, and the third's wait
        // ends first. A fourth read's client leaves while it waits: were it still queued, its wait would end too.
        for read in reads { read.sendNow(costly) }
        leaving.sendNow("GET /tables/\(table)?$top=101 HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\n\r\n")
        // The close comes 200 ms after the send by the clock, on a thread of its own: a task might wake late on a
        // busy pool, and the read would no longer be waiting when its client left.
        await runOnThreadOfItsOwn {
            usleep(200_000)
            leaving.closeSocket()
        }

        // Small reads never queue: behind the bulk reads they would wait past their bound and be refused.
        for target in ["/tables/\(table)/r0", "/tables/\(table)?$top=10"] {
            let answer = try #require(await Self.send(port: port, target).readAnswer(within: 30))
            #expect(answer.status == 200)
        }

        // Once no read waits, every refusal is decided. Each of the three reads answers: the first and the one whose
        // turn came second at the time limit, the third refused its turn. All three answers are read (the second's
        // comes a limit later), so that the refusals the server counted are all among them, or the leaving read's.
        // Read for 2 s each, a refusal still on its way on a loaded machine was once missed, and the count was off.
        try await MetricsTests.waitUntil(port: port, "tablesync_bulk_reads_refused_total", "a refused bulk read") {
            ($0 ?? 0) >= 1
        }
        try await MetricsTests.waitUntil(port: port, "tablesync_bulk_reads_waiting", "no bulk read waiting") { $0 == 0 }
        let answers = await withTaskGroup(of: RawHTTPConnection.Answer?.self) { group in
            for read in reads {
                group.addTask {
                    guard let answer = await read.readAnswer(within: 30) else {
                        read.closeSocket()
                        return nil
                    }
                    return answer
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let answered = answers.compactMap { $0 }
        #expect(answered.count == reads.count, "every read answered: \(answered.map(Self.message))")
        #expect(answered.allSatisfy { $0.status == 503 && $0.header("retry-after") == "1" })
        #expect(
            answered.contains { Self.message($0).contains("statement time limit") }, "\(answered.map(Self.message))")
        let refused = answered.filter { Self.message($0).contains("busy with other large pages") }
        #expect(!refused.isEmpty, "\(answered.map(Self.message))")

        let afterwards = try #require(await Self.send(port: port, "/tables/\(table)?$top=101").readAnswer(within: 30))
        #expect(
            afterwards.status == 200, "the turns of the reads that ended and left are free: \(Self.message(afterwards))"
        )
        let samples = try await MetricsTests.scrape(port: port)
        #expect(MetricsTests.value(samples, "tablesync_bulk_reads_waiting") == 0)
        #expect(
            MetricsTests.value(samples, "tablesync_bulk_reads_refused_total") == Double(refused.count),
            "the read whose client left was not refused")
    }

    /// 300 records of 20,000 characters.
    private static func seed(port: Int, table: String) async throws {
        let text = String(repeating: "abcd", count: 5000)
        let operations = (0..<300).map {
            BatchOperation(kind: .insert, table: table, item: ["id": .string("r\($0)"), "text": .string(text)])
        }
        let body = CanonicalJSON.encode(BatchRequest(operations: operations).json, style: .compact)
        let connection = try #require(RawHTTPConnection(port: port))
        await connection.send(
            """
            POST /batch HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: \
            3.0.0\r\nContent-Length: \(body.count)\r\n\r\n
            """
        )
        await connection.send(body)
        #expect(await connection.readAnswer(within: 120)?.status == 200)
    }

    /// `GET target` sent on a connection of its own, whose answer is still to be read.
    private static func send(port: Int, _ target: String) async throws -> RawHTTPConnection {
        let connection = try #require(RawHTTPConnection(port: port))
        await connection.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\n\r\n")
        return connection
    }

    private static func message(_ answer: RawHTTPConnection.Answer) -> String {
        (try? JSONParser.parse(answer.body)).flatMap(ProtocolErrorBody.message(in:)) ?? answer.text
    }
}
