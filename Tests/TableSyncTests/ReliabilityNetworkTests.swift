import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// Network faults between the client and a live server, injected by ``LoopbackProxy`` on loopback: whatever the
/// wire does, a sync converges with nothing lost and a retried write never becomes a duplicate or a conflict.
@Suite("Reliability: network faults", .serialized) struct ReliabilityNetworkTests {
    /// One server, a proxy in front of it, and a store that talks through the proxy.
    struct Fixture {
        let server: LiveServer
        let proxy: LoopbackProxy
        let table: String
        let directory: TemporaryDirectory
        let context: SyncContext

        static func make(_ backend: TestBackend = .sqlite) async throws -> Fixture {
            let table = uniqueTableName("net")
            let server = try await LiveServer.start(backend, tables: [table])
            let proxy = try LoopbackProxy(.faults(upstreamPort: server.port))
            let directory = TemporaryDirectory()
            let context = try SyncContext.initialize(
                directory: directory.file("store"),
                settings: StoreSettings(remote: proxy.baseURL, tables: [table]))
            return Fixture(server: server, proxy: proxy, table: table, directory: directory, context: context)
        }

        /// Quick retries, and a time limit that a starved machine's answers keep within (1 s was not, under a
        /// full load: four attempts of a delete ran out); ``expecting(_:)`` shortens it for a delayed answer.
        var options = SyncOptions(timeout: 15, retryPolicy: Reliability.quickRetries, pageSize: 5)

        /// Sets the time limit for `fault`: two thirds of the delay of a fault that holds an answer back, so that
        /// the answer counts as lost and the request is sent again.
        mutating func expecting(_ fault: NetworkFault) {
            if case .delayAfterCommit(let seconds) = fault { options.timeout = seconds / 1.5 }
        }

        func stop() async {
            proxy.stop()
            await server.stop()
            TestBackend.removeFiles(of: server.database)
        }
    }

    /// Every fault once, on each kind of write: before the server sees the request, and after it committed.
    static let writeFaults: [NetworkFault] = [
        .resetMidRequest, .resetMidResponse, .truncatedResponse, .corruptResponse,
        .status(500), .status(502), .status(503), .status(429),
        .statusAfterCommit(500), .statusAfterCommit(502), .statusAfterCommit(503), .statusAfterCommit(429),
        .delayAfterCommit(seconds: 2.5), .portalPage
    ]

    @Test(
        "a write whose exchange fails is retried and applied exactly once, one by one and in a batch",
        arguments: writeFaults, [PendingOperation.Kind.insert, .update, .delete, nil])
    func writeUnderFault(_ fault: NetworkFault, _ kind: PendingOperation.Kind?) async throws {
        // nil: an update sent through the batch endpoint (POST /batch); the others go one request each.
        let batched = kind == nil
        let kind = kind ?? .update
        var fixture = try await Fixture.make()
        fixture.options.batch = batched
        fixture.expecting(fault)
        let table = try await fixture.context.table(fixture.table)
        if kind != .insert {
            try await table.insert(["id": "r", "text": "first", "n": 1])
            try await fixture.context.push(options: fixture.options)
        }
        switch kind {
        case .insert: try await table.insert(["id": "r", "text": "first", "n": 1])
        case .update: try await table.update(["id": "r", "text": "second", "n": 2])
        case .delete: try await table.delete(id: "r")
        }
        let method = batched ? "POST" : ["insert": "POST", "update": "PUT", "delete": "DELETE"][kind.rawValue]!
        fixture.proxy.inject(fault, method: method)
        let report = try await fixture.context.push(options: fixture.options)

        #expect(fixture.proxy.faultsInjected == 1, "the fault was injected")
        #expect(report.applied == 1)
        #expect(
            report.conflicts.isEmpty && report.rejected.isEmpty,
            "a retried \(kind.rawValue) after \(fault) is no conflict")
        #expect(await fixture.context.pendingOperations.isEmpty)
        #expect(try await fixture.context.conflictKeys().isEmpty)
        let rows = try await Reliability.serverRows(fixture.server.baseURL, table: fixture.table)
        #expect(rows.count == 1, "one row on the server, never a duplicate")
        let local = try await table.read(id: "r")
        if kind == .delete {
            #expect(rows["r"].map(ServerRecord.isDeleted) == true)
            #expect(local == nil)
        } else {
            #expect(rows["r"].map(ServerRecord.content) == local.map(ServerRecord.content))
            #expect(local?["version"] == rows["r"]?["version"], "the server's copy was written back")
        }
        try await Reliability.checkInvariants(fixture.context)
        await fixture.stop()
    }

    /// Every fault once, on a pull of several pages, including a page served twice.
    static let pullFaults: [NetworkFault] = [
        .resetMidRequest, .resetMidResponse, .truncatedResponse, .corruptResponse, .status(500), .status(502),
        .status(503),
        .status(429), .delayAfterCommit(seconds: 2.5), .replayPreviousPage
    ]

    @Test("an incremental pull converges through any fault on any page", arguments: pullFaults)
    func pullUnderFault(_ fault: NetworkFault) async throws {
        var fixture = try await Fixture.make()
        fixture.expecting(fault)
        let writer = try SyncContext.initialize(
            directory: fixture.directory.file("writer"),
            settings: StoreSettings(remote: fixture.server.baseURL, tables: [fixture.table]))
        // Long texts make pages pass 1 KiB, so the server gzips them and a corrupt page is a corrupt gzip stream.
        for index in 0..<23 {
            try await writer.table(fixture.table).insert([
                "id": .string("p\(index)"), "text": .string(String(repeating: "lorem ipsum ", count: 30))
            ])
        }
        try await writer.push(options: SyncOptions(retryPolicy: .none))
        // The third list request (the second page) goes wrong.
        fixture.proxy.inject(.none, method: "GET", times: 2)
        fixture.proxy.inject(fault, method: "GET")
        var attempts = 0
        while true {
            attempts += 1
            do {
                try await fixture.context.pull(table: fixture.table, queryID: "all", options: fixture.options)
                break
            } catch let error as SyncError {
                #expect(attempts < 3, "the pull keeps failing: \(error)")
                if attempts >= 3 { break }
            }
        }
        #expect(fixture.proxy.faultsInjected == 1)
        let local = try await Reliability.localContent(fixture.context, table: fixture.table)
        #expect(local == (try await Reliability.serverContent(fixture.server.baseURL, table: fixture.table)))
        #expect(local.count == 23)
        try await Reliability.checkInvariants(fixture.context)
        // Nothing more to fetch: the watermark stands at the end.
        let again = try await fixture.context.pull(table: fixture.table, queryID: "all", options: fixture.options)
        #expect(again.written == 0)
        await fixture.stop()
    }

    @Test("a refused connection stops the sync with the journal intact; the next sync delivers it")
    func connectionRefused() async throws {
        let fixture = try await Fixture.make()
        let port = fixture.proxy.port
        fixture.proxy.stop()
        try await fixture.context.table(fixture.table).insert(["id": "a", "text": "offline"])
        await #expect(throws: SyncError.self) { try await fixture.context.push(options: fixture.options) }
        #expect(await fixture.context.pendingOperations.count == 1)
        let proxy = try LoopbackProxy(.faults(upstreamPort: fixture.server.port), port: port)
        let report = try await fixture.context.push(options: fixture.options)
        #expect(report.applied == 1)
        #expect(
            try await Reliability.serverContent(fixture.server.baseURL, table: fixture.table)["a"]?["text"] == "offline"
        )
        proxy.stop()
        await fixture.stop()
    }

    /// Stands for a laptop on a hotel network: every request is answered by the captive portal's login page
    /// (`200 text/html`) until the person logs in.
    @Test(
        "a captive portal's 200 HTML page to every write: the push exits as unreachable and keeps its operations",
        arguments: [false, true])
    func captivePortal(batched: Bool) async throws {
        var fixture = try await Fixture.make()
        fixture.options.batch = batched
        let table = try await fixture.context.table(fixture.table)
        try await table.insert(["id": "a", "text": "written at the hotel"])
        try await table.insert(["id": "b", "text": "and another"])
        fixture.proxy.inject(.portalPage, method: "POST", times: 1_000)
        do {
            try await fixture.context.push(options: fixture.options)
            Issue.record("a push answered by a portal's page must fail")
        } catch let error as SyncError {
            guard case .malformedResponse(_, let reason) = error else {
                Issue.record("expected a malformed answer, got \(error)")
                return
            }
            #expect(error.kind == .unreachable, "exit 4, retry later")
            #expect(reason.contains("text/html"), "\(reason)")
        }
        #expect(await fixture.context.pendingOperations.count == 2, "both inserts still pending")
        #expect(try await fixture.context.conflictKeys().isEmpty, "nothing filed as a conflict")

        fixture.proxy.clearFaults()
        let report = try await fixture.context.push(options: fixture.options)
        #expect(report.applied == 2 && report.conflicts.isEmpty && report.rejected.isEmpty, "\(report)")
        let rows = try await Reliability.serverContent(fixture.server.baseURL, table: fixture.table)
        #expect(rows["a"]?["text"] == "written at the hotel" && rows["b"]?["text"] == "and another")
        await fixture.stop()
    }

    @Test("random faults on every request: repeated syncs converge to the oracle, with no duplicate and no conflict")
    func randomFaults() async throws {
        var fixture = try await Fixture.make()
        let table = fixture.table
        var generator = SeededGenerator(seed: Reliability.seed)
        let rounds = Reliability.scale(bounded: 4, long: 40)
        let delay = NetworkFault.delayAfterCommit(seconds: 1.5)
        fixture.expecting(delay)
        let allFaults =
            Self.writeFaults.filter { if case .delayAfterCommit = $0 { return false } else { return true } }
            + [.replayPreviousPage, delay]
        fixture.proxy.injectRandomly(seed: Reliability.seed, probability: 0.3, from: allFaults)
        var oracle: [String: [String: JSONValue]] = [:]
        var syncs = 0
        // A deleted id stays taken on the server (a new insert of it is a 409 with the deleted row, a conflict by
        // design), so the operations never reuse one.
        var deleted: Set<String> = []
        for round in 0..<rounds {
            for step in 0..<8 {
                let id = "k\(Int.random(in: 0..<(10 + 3 * round), using: &generator))"
                if deleted.contains(id) { continue }
                let value: [String: JSONValue] = [
                    "id": .string(id), "round": .integer(Int64(round)), "step": .integer(Int64(step))
                ]
                let exists = try await fixture.context.table(table).read(id: id) != nil
                switch (exists, Int.random(in: 0..<4, using: &generator)) {
                case (false, _):
                    _ = try await fixture.context.table(table).insert(value)
                    oracle[id] = ServerRecord.content(value)
                case (true, 0):
                    try await fixture.context.table(table).delete(id: id)
                    oracle[id] = nil
                    deleted.insert(id)
                case (true, 1):
                    // A hand edit: the file rewritten outside TableSync.
                    var record = try #require(try await fixture.context.table(table).read(id: id))
                    record["round"] = .integer(Int64(round))
                    record["step"] = .integer(Int64(step))
                    record["hand"] = true
                    try Data(CanonicalJSON.encode(.object(record), style: .pretty))
                        .write(to: URL(fileURLWithPath: fixture.context.layout.recordFile(table: table, id: id)))
                    oracle[id] = ServerRecord.content(record)
                default:
                    var record = try #require(try await fixture.context.table(table).read(id: id))
                    record["round"] = .integer(Int64(round))
                    record["step"] = .integer(Int64(step))
                    record["hand"] = nil
                    _ = try await fixture.context.table(table).update(record)
                    oracle[id] = ServerRecord.content(record)
                }
            }
            // Cron: sync until one run gets through.
            for _ in 0..<30 {
                syncs += 1
                if (try? await fixture.context.push(options: fixture.options)) != nil { break }
            }
            #expect(await fixture.context.pendingOperations.isEmpty, "round \(round): the journal drained")
            #expect(
                try await fixture.context.conflictKeys().isEmpty,
                """
                round \(round): no conflict from a retried write: \(Self.conflictFiles(fixture.context)) after \
                \(fixture.proxy.log.suffix(12))
                """
            )
            #expect(
                try await Reliability.serverContent(fixture.server.baseURL, table: table) == oracle, "round \(round)")
        }
        try await Reliability.checkInvariants(fixture.context)
        // A fresh device pulls through the faulty link and sees exactly the oracle.
        let other = try SyncContext.initialize(
            directory: fixture.directory.file("other"),
            settings: StoreSettings(remote: fixture.proxy.baseURL, tables: [table]))
        for _ in 0..<30 where (try? await other.pull(table: table, queryID: "all", options: fixture.options)) == nil {}
        #expect(try await Reliability.localContent(other, table: table) == oracle)
        print(
            """
            network faults: \(rounds) rounds, \(syncs) pushes, \(fixture.proxy.log.count) exchanges, \
            \(fixture.proxy.faultsInjected) faults injected
            """
        )
        #expect(fixture.proxy.faultsInjected > 0)
        await fixture.stop()
    }

    /// The conflict files of a store, for failure messages.
    static func conflictFiles(_ context: SyncContext) -> [String] {
        let root = context.layout.conflictsDirectory
        return (FileManager.default.subpaths(atPath: root) ?? []).compactMap { path in
            FileManager.default.contents(atPath: root + "/" + path).map {
                path + ": " + String(decoding: $0, as: UTF8.self)
            }
        }
    }
}
