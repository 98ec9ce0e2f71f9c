import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync

/// A server scaled out: three `tablesync-server` processes on one PostgreSQL database, as behind a load balancer,
/// sharing nothing but the database. Writers send each write to the next instance in turn, stores push batches
/// through one instance each, and stores pull with keyset pages through one instance each, all at once.
/// Afterwards: no write lost or applied twice, `updatedAt` strictly increasing per table across the instances,
/// and every pulling store holds every row at its latest version. Skipped when `TABLESYNC_TEST_POSTGRES_URL` is not
/// set.
@Suite("Reliability: many server instances", .serialized) struct ReliabilityManyInstancesTests {
    static let instances = 3
    static let writers = 6
    static let writesPerWriter = Reliability.scale(bounded: 18, long: 240)
    static let idsPerWriter = 5
    static let pushingStores = 3
    static let pushRounds = Reliability.scale(bounded: 3, long: 25)
    static let recordsPerPushingStore = 40
    static let pullPageSizes = [3, 7, 11]

    /// One acknowledged write: the record, and the system properties the instance that applied it answered with.
    struct Acknowledgement: Sendable {
        let id: String
        let version: String
        let updatedAt: Timestamp
    }

    @Test(
        """
        3 instances on one PostgreSQL: writes, batched pushes and keyset pulls spread over them lose, repeat and skip \
        nothing
        """,
        arguments: TestBackend.postgresIfAvailable)
    func threeInstancesOneDatabase(_ backend: TestBackend) async throws {
        let databaseURL = try #require(TestBackend.postgresURL, "TABLESYNC_TEST_POSTGRES_URL")
        let table = uniqueTableName("many")
        let directory = TemporaryDirectory()
        let started = Date()
        // The three start at once: their schema preparation on the shared database must not trip over each other.
        let servers = try await withThrowingTaskGroup(of: ServerProcess.self) { group in
            for instance in 0..<Self.instances {
                group.addTask {
                    try await ServerProcess.start(
                        ["--database", databaseURL, "--table", table],
                        logPath: directory.file("server-\(instance).log"))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        func instance(_ number: Int) -> ServerProcess { servers[number % servers.count] }

        let pullers = try Self.pullPageSizes.enumerated().map { number, pageSize in
            (
                context: try SyncContext.initialize(
                    directory: directory.file("puller-\(number)"),
                    settings: StoreSettings(remote: instance(number).baseURL, tables: [table])),
                pageSize: pageSize
            )
        }
        let pushers = try (0..<Self.pushingStores).map { number in
            try SyncContext.initialize(
                directory: directory.file("pusher-\(number)"),
                settings: StoreSettings(remote: instance(number + 1).baseURL, tables: [table]))
        }
        let progress = ReliabilityLateCommitTests.WriteProgress()
        let pullerCount = pullers.count

        let pulling = pullers.enumerated().map { number, store in
            Task {
                var pullsDuringWrites = 0
                let options = SyncOptions(retryPolicy: Reliability.quickRetries, pageSize: store.pageSize).with {
                    $0.paging = .keyset
                }
                while await !progress.done {
                    _ = try await store.context.pull(table: table, queryID: "all", options: options)
                    if await !progress.done { pullsDuringWrites += 1 }
                    await progress.pulled(store: number)
                }
                return pullsDuringWrites
            }
        }
        let pushing = pushers.enumerated().map { number, store in
            Task {
                let records = try await store.table(table)
                var batchedPushes = 0
                for round in 0..<Self.pushRounds {
                    for index in 0..<Self.recordsPerPushingStore {
                        let record: [String: JSONValue] = [
                            "id": .string("p\(number)-\(index)"), "round": .integer(Int64(round))
                        ]
                        _ = try await round == 0 ? records.insert(record) : records.update(record)
                    }
                    let report = try await store.push(
                        options: SyncOptions(retryPolicy: Reliability.quickRetries)
                            .with { $0.batchMaxOperations = 16 })
                    #expect(
                        report.applied == Self.recordsPerPushingStore && report.conflicts.isEmpty
                            && report.rejected.isEmpty,
                        "pusher \(number), round \(round): \(report)")
                    if report.batched { batchedPushes += 1 }
                }
                return batchedPushes
            }
        }
        let acknowledgements = try await withThrowingTaskGroup(of: [Acknowledgement].self) { group in
            for writer in 0..<Self.writers {
                group.addTask {
                    // One client per instance; no retries, so that no write can be applied twice by the client.
                    let clients = servers.map {
                        ServerHTTPClient(
                            baseURL: $0.baseURL, defaultHeaders: ["ZUMO-API-VERSION": "3.0.0"],
                            timeout: 60, retryPolicy: .none)
                    }
                    var written: Set<String> = []
                    var acknowledged: [Acknowledgement] = []
                    for index in 0..<Self.writesPerWriter {
                        if index == Self.writesPerWriter / 2 {
                            // Halfway, every puller has pulled at least once, so that pulls and writes overlap.
                            let deadline = Date().addingTimeInterval(120)
                            while await progress.fewestPulls(stores: pullerCount) < 1, Date() < deadline {
                                try await Task.sleep(for: .milliseconds(10))
                            }
                        }
                        let id = "w\(writer)-\(index % Self.idsPerWriter)"
                        let body = CanonicalJSON.encode(
                            ["id": .string(id), "n": .integer(Int64(index))], style: .compact)
                        // Each write goes to the next instance: a writer's consecutive writes never meet the same one
                        // twice running.
                        let client = clients[(writer + index) % clients.count]
                        let response = try await client.send(
                            written.contains(id)
                                ? HTTPRequest(method: "PUT", path: "/tables/\(table)/\(id)", body: body)
                                : HTTPRequest(method: "POST", path: "/tables/\(table)", body: body))
                        try #require(
                            (200...299).contains(response.status), "write \(index) of \(id): \(response.status)")
                        let answer = try JSONParser.parse(response.body)
                        let version = try #require(
                            answer["version"]?.stringValue, "write \(index) of \(id) answers a version")
                        let updatedAt = try #require(
                            answer["updatedAt"]?.stringValue.flatMap(Timestamp.init(parsing:)),
                            "write \(index) of \(id) answers an updatedAt")
                        written.insert(id)
                        acknowledged.append(Acknowledgement(id: id, version: version, updatedAt: updatedAt))
                    }
                    return acknowledged
                }
            }
            return try await group.reduce(into: [[Acknowledgement]]()) { $0.append($1) }
        }
        let batchedPushes = try await pushing.asyncMap { try await $0.value }
        await progress.finish()
        let pullsDuringWrites = try await pulling.asyncMap { try await $0.value }

        // updatedAt strictly increasing per table across instances: each writer saw its own stamps rise, and no
        // two acknowledged writes, whichever instances applied them, share a stamp.
        for (writer, writes) in acknowledgements.enumerated() {
            let stamps = writes.map(\.updatedAt)
            #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "writer \(writer)'s stamps rise: \(stamps)")
        }
        let allStamps = acknowledgements.flatMap { $0.map(\.updatedAt) }
        #expect(Set(allStamps).count == allStamps.count, "no two writes share an updatedAt")

        // No write lost or repeated: the server holds each id once, at the last acknowledged version.
        let serverRows = try await Reliability.serverRows(instance(0).baseURL, table: table)
        var expected: [String: String] = [:]
        for writes in acknowledgements { for write in writes { expected[write.id] = write.version } }
        for (number, store) in pushers.enumerated() {
            for record in try await store.table(table).query() {
                expected[try #require(record["id"]?.stringValue)] = record["version"]?.stringValue
            }
            #expect(await store.pendingOperations.isEmpty, "pusher \(number) sent everything")
        }
        #expect(expected.count == Self.writers * Self.idsPerWriter + Self.pushingStores * Self.recordsPerPushingStore)
        #expect(
            serverRows.mapValues { $0["version"]?.stringValue ?? "" } == expected,
            "the server holds exactly the acknowledged writes at their last versions")
        let serverStamps = serverRows.values.compactMap {
            $0["updatedAt"]?.stringValue.flatMap(Timestamp.init(parsing:))
        }
        #expect(Set(serverStamps).count == serverRows.count, "every row has an updatedAt of its own")

        // No row skipped: one last pull through each instance brings every row at its latest version.
        for (number, store) in pullers.enumerated() {
            _ = try await store.context.pull(
                table: table, queryID: "all",
                options: SyncOptions(retryPolicy: Reliability.quickRetries, pageSize: store.pageSize).with {
                    $0.paging = .keyset
                })
            let records = try await store.context.table(table).query()
            let versions = Dictionary(
                uniqueKeysWithValues: records.map { ($0["id"]!.stringValue!, $0["version"]?.stringValue ?? "") })
            #expect(
                versions == expected,
                "puller \(number) (pages of \(store.pageSize), through instance \(number % Self.instances))")
        }
        #expect(
            pullsDuringWrites.allSatisfy { $0 > 0 }, "every puller pulled while the others wrote: \(pullsDuringWrites)")
        #expect(
            batchedPushes.allSatisfy { $0 == Self.pushRounds },
            "every push went through the batch endpoint: \(batchedPushes)")

        for store in pullers.map(\.context) + pushers { await store.close() }
        for server in servers {
            let status = await server.stop()
            #expect(status == 0, "a server stops cleanly on SIGTERM: \(status)\n\(server.log)")
        }
        print(
            "many instances: \(Self.instances) servers, \(Self.writers) writers × \(Self.writesPerWriter) writes, "
                + "\(Self.pushingStores) stores × \(Self.pushRounds) batched pushes of \(Self.recordsPerPushingStore), "
                    + """
                    pulls during the writes \(pullsDuringWrites); \
                    \(String(format: "%.1f", Date().timeIntervalSince(started))) s
                    """
        )
    }
}

extension Array {
    /// The results of `transform` on each element, awaited one after another in order.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        results.reserveCapacity(count)
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
