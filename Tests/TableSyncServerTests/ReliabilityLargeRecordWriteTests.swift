import Foundation
import SyncProtocol
@testable import TableSyncServer
import Testing
import TestSupport

/// Small writes beside large records keep their usual latency: with the records table clustered on its key
/// (SQLite's `WITHOUT ROWID`, as 0.1.0 made it), four 15 MB records made a batch of 1,000 tiny inserts take seconds,
/// as each insert moved the large records' pages about. A latency judgement, so it runs in `make stress` only
/// (`TABLESYNC_STRESS=1`); the layout itself is checked in `DatabaseFormatTests`.
@Suite(
    "Reliability: writes beside large records", .serialized,
    .enabled(if: ProcessInfo.processInfo.environment["TABLESYNC_STRESS"].map { !$0.isEmpty && $0 != "0" } ?? false))
struct ReliabilityLargeRecordWriteTests {
    /// How much slower than the same run's batch before the large records a batch beside them may be: far above
    /// the noise of a loaded machine, far below the stall. Single inserts are reported, not judged: a connection
    /// each, their milliseconds are the machine's load as much as the server's.
    static func batchLimit(floor: Duration) -> Duration { floor * 5 + .milliseconds(500) }

    @Test(
        """
        after four 15 MB records, batches of 1,000 tiny inserts (random ids) take about as long as before them
        """,
        arguments: Backend.available)
    func smallWritesBesideLargeRecords(backend: Backend) async throws {
        let database = try await sideDatabase(backend, suffix: "_large_writes")
        defer { TestBackend.removeFiles(of: database) }
        let table = uniqueTableName("beside")
        // The floor is measured in a table of its own, whose rows SQLite keeps apart from the other's (the key
        // starts with the table's name): the large records then lie among the later inserts alone.
        let floorTable = uniqueTableName("zfloor")
        let directory = TemporaryDirectory()
        let server = try await ServerProcess.start(
            ["--database", FilterMemoryTests.url(of: database), "--table", table, "--table", floorTable],
            logPath: directory.file("server.log"))
        do {
            let port = try #require(Int(server.baseURL.split(separator: ":").last ?? ""))
            func batch(into table: String) async throws -> Duration {
                let operations = (0..<1000).map { _ in
                    BatchOperation(
                        kind: .insert, table: table, item: ["id": .string(UUID().uuidString), "text": "small"])
                }
                let started = ContinuousClock.now
                let answer = try await FilterMemoryTests.send(
                    port: port, "POST", "/batch", body: BatchRequest(operations: operations).json)
                #expect(answer.status == 200)
                return ContinuousClock.now - started
            }
            let floor = try await batch(into: floorTable)
            for _ in 0..<4 {
                let large: JSONValue = ["id": .string(UUID().uuidString), "text": .string(FilterMemoryTests.largeText)]
                #expect(
                    try await FilterMemoryTests.send(port: port, "POST", "/tables/\(table)", body: large).status == 201)
            }
            var batches: [Duration] = []
            for _ in 0..<3 { batches.append(try await batch(into: table)) }
            var singles: [Duration] = []
            for _ in 0..<21 {
                let started = ContinuousClock.now
                let small: JSONValue = ["id": .string(UUID().uuidString), "text": "small"]
                #expect(
                    try await FilterMemoryTests.send(port: port, "POST", "/tables/\(table)", body: small).status == 201)
                singles.append(ContinuousClock.now - started)
            }
            let median = singles.sorted()[singles.count / 2]
            print(
                """
                writes beside large records (\(backend)): a batch of 1,000 before them \(floor), beside them \
                \(batches), single insert median \(median)
                """)
            #expect(
                batches.allSatisfy { $0 <= Self.batchLimit(floor: floor) },
                "batches of 1,000 beside large records: \(batches); before them: \(floor)")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
