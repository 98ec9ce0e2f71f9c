import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync

/// Late commits end to end: `tablesync-server` on PostgreSQL takes inserts and updates from 8 concurrent writers
/// over HTTP while two stores pull incrementally with small pages, again and again. A row committed after a pull
/// passed its neighbours must still come to both stores: after the writers stop and one last pull, each store
/// holds every row at its latest version. Skipped when `TABLESYNC_TEST_POSTGRES_URL` is not set.
@Suite("Reliability: late commits", .serialized) struct ReliabilityLateCommitTests {
    static let writers = 8
    static let writesPerWriter = Reliability.scale(bounded: 20, long: 250)
    static let idsPerWriter = 6

    /// Whether the writers are done, and how many pulls each store has finished, shared by writers and pullers.
    actor WriteProgress {
        private(set) var done = false
        private var pulls: [Int: Int] = [:]
        func finish() { done = true }
        func pulled(store: Int) { pulls[store, default: 0] += 1 }
        /// The fewest pulls any of `stores` stores has finished.
        func fewestPulls(stores: Int) -> Int { (0..<stores).map { pulls[$0] ?? 0 }.min() ?? 0 }
    }

    @Test(
        """
        8 writers on PostgreSQL, two stores pulling with pages of 3 and 7: no row skipped, every row at its latest \
        version
        """,
        arguments: TestBackend.postgresIfAvailable)
    func concurrentWritersAndPullers(_ backend: TestBackend) async throws {
        let table = uniqueTableName("late")
        let server = try await LiveServer.start(backend, tables: [table])
        let directory = TemporaryDirectory()
        let settings = StoreSettings(remote: server.baseURL, tables: [table])
        let stores = [
            (context: try SyncContext.initialize(directory: directory.file("three"), settings: settings), pageSize: 3),
            (context: try SyncContext.initialize(directory: directory.file("seven"), settings: settings), pageSize: 7)
        ]
        let progress = WriteProgress()
        let storeCount = stores.count
        let started = Date()

        // The pullers run until the writers are done, each pull incremental from the last saved watermark.
        let pullers = stores.enumerated().map { number, store in
            Task {
                var pulls = 0
                var pullsDuringWrites = 0
                let options = SyncOptions(retryPolicy: Reliability.quickRetries, pageSize: store.pageSize)
                while await !progress.done {
                    _ = try await store.context.pull(table: table, queryID: "all", options: options)
                    pulls += 1
                    if await !progress.done { pullsDuringWrites += 1 }
                    await progress.pulled(store: number)
                }
                return (pulls, pullsDuringWrites)
            }
        }
        let written = try await withThrowingTaskGroup(of: [String: String].self) { group in
            for writer in 0..<Self.writers {
                group.addTask {
                    // No retries (a retried write could be applied twice), and a time limit far above any write's
                    // own cost: on a loaded 2-core machine a write waits behind the 7 others for its table's clock
                    // row, and 10 s was once not enough. What this test checks is where rows end up, not how fast.
                    let client = ServerHTTPClient(
                        baseURL: server.baseURL, defaultHeaders: ["ZUMO-API-VERSION": "3.0.0"],
                        timeout: 60, retryPolicy: .none)
                    var versions: [String: String] = [:]
                    for index in 0..<Self.writesPerWriter {
                        if index == Self.writesPerWriter / 2 {
                            // Halfway, every store must have pulled at least once, so that pulls and writes overlap
                            // however slow the disk makes the pulls (each page waits for a syncfs).
                            let deadline = Date().addingTimeInterval(120)
                            while await progress.fewestPulls(stores: storeCount) < 1, Date() < deadline {
                                try await Task.sleep(nanoseconds: 10_000_000)
                            }
                        }
                        let id = "w\(writer)-\(index % Self.idsPerWriter)"
                        let body = CanonicalJSON.encode(
                            ["id": .string(id), "n": .integer(Int64(index))], style: .compact)
                        let response = try await client.send(
                            versions[id] == nil
                                ? HTTPRequest(method: "POST", path: "/tables/\(table)", body: body)
                                : HTTPRequest(method: "PUT", path: "/tables/\(table)/\(id)", body: body))
                        #expect((200...299).contains(response.status), "write \(index) of \(id): \(response.status)")
                        versions[id] = try JSONParser.parse(response.body)["version"]?.stringValue
                    }
                    return versions
                }
            }
            var all: [String: String] = [:]
            for try await versions in group { all.merge(versions) { _, new in new } }
            return all
        }
        await progress.finish()
        var figures: [String] = []
        for (store, puller) in zip(stores, pullers) {
            let (pulls, pullsDuringWrites) = try await puller.value
            // The last pull, after every write committed.
            _ = try await store.context.pull(
                table: table, queryID: "all",
                options: SyncOptions(retryPolicy: Reliability.quickRetries, pageSize: store.pageSize))
            let records = try await store.context.table(table).query()
            let versions = Dictionary(
                uniqueKeysWithValues: records.map { ($0["id"]!.stringValue!, $0["version"]?.stringValue ?? "") })
            let missing = written.keys.filter { versions[$0] == nil }.sorted()
            let stale = written.keys.filter { versions[$0] != nil && versions[$0] != written[$0] }.sorted()
            #expect(
                missing.isEmpty && stale.isEmpty,
                "pages of \(store.pageSize): rows never pulled \(missing), rows at an older version \(stale)")
            #expect(versions.count == written.count, "pages of \(store.pageSize): no row the writers did not write")
            #expect(pullsDuringWrites > 0, "pages of \(store.pageSize): pulls ran while the writers wrote")
            figures.append("pages of \(store.pageSize): \(pulls + 1) pulls (\(pullsDuringWrites) during the writes)")
        }
        let serverRows = try await Reliability.serverRows(server.baseURL, table: table)
        #expect(
            serverRows.mapValues { $0["version"]?.stringValue ?? "" } == written,
            "the writers' last versions are the server's")
        print(
            """
            late commits: \(Self.writers) writers × \(Self.writesPerWriter) writes on \(written.count) rows; \
            \(figures.joined(separator: ", ")); \(String(format: "%.1f", Date().timeIntervalSince(started))) s
            """
        )
        for store in stores { await store.context.close() }
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }
}
