import Foundation
import GRDB
import SyncProtocol
import Synchronization
import Testing
import TestSupport
@testable import TableSyncServer

#if os(Linux)
import Glibc

/// How the server's SQLite connections are set up (``SQLiteRecordRepository/configuration()``).
@Suite struct SQLiteConfigurationTests {
    /// The nice value of the calling thread (Linux gives each thread its own; 0 names the caller).
    static func threadNice() -> Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    // Stands for the server under attack: with GRDB's default the reads ran at nice -2, ahead of the threads that
    // parse and answer small requests.
    @Test("reads and writes run at the priority of the process's other threads, not above them")
    func statementsRunAtTheServersPriority() async throws {
        let directory = TemporaryDirectory()
        let pool = try DatabasePool(
            path: directory.file("records.sqlite"), configuration: SQLiteRecordRepository.configuration())
        let processNice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
        let readNice = try await pool.read { _ in Self.threadNice() }
        let writeNice = try await pool.write { _ in Self.threadNice() }
        #expect(readNice == processNice && writeNice == processNice, "read \(readNice), write \(writeNice)")
    }

    /// Takes every record, noting the scheduling policy of the thread that reads them (`SCHED_IDLE` is 5).
    struct PolicyRecorder: PageCollector {
        var policies: Set<Int32> = []

        mutating func take(_ record: StoredRecord) -> Bool {
            var policy: Int32 = 0
            var parameters = sched_param()
            _ = pthread_getschedparam(pthread_self(), &policy, &parameters)
            policies.insert(policy)
            return true
        }
    }

    /// A repository at `priority` on a new file in `directory`, holding `count` records of `text` in `table`.
    static func repository(
        in directory: TemporaryDirectory, _ priority: BulkReadPriority, table: TableSyncServer.TableOptions, count: Int,
        text: String = "", statementTimeout: Duration = ServerConfiguration.defaultStatementTimeout,
        metrics: ServerMetrics? = nil
    ) async throws -> SQLiteRecordRepository {
        let repository = try SQLiteRecordRepository(
            path: directory.file("\(UUID().uuidString).sqlite"), statementTimeout: statementTimeout,
            bulkReadPriority: priority, metrics: metrics)
        try await repository.prepare(tables: [table])
        _ = try await repository.write(
            (0..<count).map { index in
                RecordWriteRequest(table: table.name, id: "r\(index)") { _ in .insert(["text": .string(text)]) }
            })
        return repository
    }

    /// The count of `tablesync_bulk_reads_starved_total` in `metrics`.
    static func starvedReads(_ metrics: ServerMetrics) -> Int? {
        let text = String(decoding: metrics.exposition(), as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("tablesync_bulk_reads_starved_total ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) }
    }

    // Stands for the server under attack: a large page's or a costly filter's read yields the processor to the
    // threads that parse and answer small requests the moment one of them wakes.
    @Test("a bulk read runs under SCHED_IDLE on a thread of its own; a small read, and a bulk read at normal, do not")
    func bulkReadsYield() async throws {
        let directory = TemporaryDirectory()
        let table = TableSyncServer.TableOptions(name: "todo")
        func policies(_ priority: BulkReadPriority, top: Int) async throws -> (Set<Int32>, starved: Int?) {
            let metrics = ServerMetrics()
            let repository = try await Self.repository(
                in: directory, priority, table: table, count: 3, metrics: metrics)
            let query = try ListQuery.parse(QueryString("$top=\(top)"), version: .v2, table: table)
            let page = try await repository.list(
                in: RecordScope(table: table.name), query: query, into: PolicyRecorder())
            #expect(page.recordCount == 3)
            return (page.collected.policies, Self.starvedReads(metrics))
        }
        let bulk = ReadWeight.smallPage + 1
        // On a machine the rest of the suite keeps busy the idle thread may be starved, given up, and the page read
        // again at the normal priority: the counter says which.
        let (idle, starved) = try await policies(.idle, top: bulk)
        #expect(
            (idle == [5] && starved == 0) || (idle == [0] && starved == 1),
            "a bulk read at idle: policies \(idle), \(starved ?? -1) starved")
        #expect(try await policies(.idle, top: ReadWeight.smallPage) == ([0], 0), "a small read")
        #expect(try await policies(.normal, top: bulk) == ([0], 0), "a bulk read at normal")
    }

    // Stands for a server on a machine that other programs keep busy: there an idle thread would hardly run, and
    // every pull (bulk reads of 1,000 records) would end at the statement time limit.
    @Test("a bulk read starved of processors by busy threads is read again at the normal priority, and answered")
    func starvedBulkReadIsAnswered() async throws {
        let directory = TemporaryDirectory()
        let table = TableSyncServer.TableOptions(name: "todo")
        let metrics = ServerMetrics()
        let repository = try await Self.repository(
            in: directory, .idle, table: table, count: 60, text: String(repeating: "abcd", count: 5000),
            statementTimeout: .seconds(60), metrics: metrics)
        // Growth 16 on 60 records of 20,000 characters: a tenth of a second of one processor.
        let filter = "length(replace(replace(replace(replace(text,'a','bb'),'b','cc'),'c','dd'),'d','ee')) gt 0"
        let query = try ListQuery.parse(
            QueryString("$top=1000&$filter=" + TablePath.percentEncodeQueryComponent(filter)), version: .v2,
            table: table)
        // A thread per processor that keeps it busy for at most 8 s, so that a slow run of the suite is not made
        // slower for long; the watch looks every 250 ms.
        let spinning = Atomic(true)
        let spinnersRunning = Atomic(0)
        let spinners = ProcessInfo.processInfo.activeProcessorCount
        let spinUntil = ContinuousClock.now + .seconds(8)
        for _ in 0..<spinners {
            Thread {
                spinnersRunning.add(1, ordering: .relaxed)
                while spinning.load(ordering: .relaxed), ContinuousClock.now < spinUntil {}
            }
            .start()
        }
        defer { spinning.store(false, ordering: .relaxed) }
        // The read begins once every processor is busy: before, an idle thread may find one free and read the page.
        while spinnersRunning.load(ordering: .relaxed) < spinners { try await Task.sleep(for: .milliseconds(1)) }
        let clock = ContinuousClock()
        let started = clock.now
        let page = try await repository.list(in: RecordScope(table: table.name), query: query, into: PolicyRecorder())
        let took = clock.now - started
        print("starved bulk read: answered after \(took)")
        #expect(page.recordCount == 60)
        #expect(page.collected.policies == [0], "read again by a thread at the normal priority")
        #expect(Self.starvedReads(metrics) == 1)
        // With the watch switched off, the idle thread had too little of the processors to end within the 8 s, and
        // read the page after the spinning stopped, at SCHED_IDLE: the policy above tells the two apart. The answer
        // itself takes 0.4 s alone, up to 17 s inside the whole suite, whose task pool stalls for seconds at a time.
        #expect(took < .seconds(50), "answered after \(took)")
    }

    /// Takes every record like ``PolicyRecorder``; on a thread under `SCHED_IDLE` it first waits until `released`
    /// (30 s at most), as an idle thread that gets no processor does.
    struct IdleThreadHolder: PageCollector {
        let released: DispatchSemaphore
        var policies: Set<Int32> = []

        mutating func take(_ record: StoredRecord) -> Bool {
            var policy: Int32 = 0
            var parameters = sched_param()
            _ = pthread_getschedparam(pthread_self(), &policy, &parameters)
            if policy == 5 && policies.isEmpty {
                if released.wait(timeout: .now() + 30) == .success { released.signal() }
            }
            policies.insert(policy)
            return true
        }
    }

    // Stands for a busy machine again: the idle threads given up keep their connections until they get a processor,
    // which there can take seconds. Here they are held until the test lets them go, so that nothing depends on the
    // scheduler.
    @Test(
        """
        idle threads given up hold connections of their own: more bulk reads at once than the pool has readers, and \
        small reads, are answered while they wait
        """)
    func idleThreadsGivenUpLeaveThePoolsConnections() async throws {
        let directory = TemporaryDirectory()
        let table = TableSyncServer.TableOptions(name: "todo")
        let metrics = ServerMetrics()
        let repository = try await Self.repository(in: directory, .idle, table: table, count: 10, metrics: metrics)
        let query = try ListQuery.parse(QueryString("$top=1000"), version: .v2, table: table)
        let released = DispatchSemaphore(value: 0)
        defer { released.signal() }
        // More than the 5 readers of GRDB's pool.
        let policies = try await withThrowingTaskGroup(of: Set<Int32>.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    let page = try await repository.list(
                        in: RecordScope(table: table.name), query: query, into: IdleThreadHolder(released: released))
                    #expect(page.recordCount == 10)
                    return page.collected.policies
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let small = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<10 {
                group.addTask {
                    try await repository.record(in: RecordScope(table: table.name), id: "r\(index)") != nil
                }
            }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        let heldThen = repository.bulkReadConnections.lent
        #expect(policies.allSatisfy { $0 == [0] }, "every page read at the normal priority: \(policies)")
        #expect(small == 10)
        let idleThreads = max(2, ProcessInfo.processInfo.activeProcessorCount)
        #expect(heldThen == idleThreads, "idle threads still held")
        #expect(Self.starvedReads(metrics) == idleThreads, "each idle thread was given up")
        released.signal()
        // Let go, the idle threads see that they were given up, end, and give their connections back.
        let deadline = ContinuousClock.now + .seconds(30)
        while repository.bulkReadConnections.lent > 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(repository.bulkReadConnections.lent == 0)
    }
}
#endif
