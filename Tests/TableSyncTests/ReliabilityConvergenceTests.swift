import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// Three stores and one server, random inserts, updates, deletes and hand edits on all of them, syncs in random
/// order, under each conflict policy: after quiescing every store equals the server, no value on the server was
/// invented, and under `manual` every divergent write waits as a conflict holding the local content.
@Suite("Reliability: convergence", .serialized) struct ReliabilityConvergenceTests {
    @Test(
        "three stores converge to the server under each conflict policy, on each database",
        arguments: TestBackend.available, StoreSettings.ConflictPolicy.allCases)
    func converge(_ backend: TestBackend, _ policy: StoreSettings.ConflictPolicy) async throws {
        let table = uniqueTableName("conv")
        let server = try await LiveServer.start(backend, tables: [table])
        let directory = TemporaryDirectory()
        let settings = StoreSettings(remote: server.baseURL, tables: [table], conflictPolicy: policy)
        var stores: [SyncContext] = []
        for name in ["a", "b", "c"] {
            let store = try SyncContext.initialize(directory: directory.file(name), settings: settings)
            try await store.addQuery(PullQuery(id: "all", table: table))
            stores.append(store)
        }
        let options = SyncOptions(retryPolicy: .none, pageSize: 7)
        let policyIndex = UInt64(StoreSettings.ConflictPolicy.allCases.firstIndex(of: policy)!)
        var generator = SeededGenerator(seed: Reliability.seed &+ policyIndex)
        // Every content any store gave an id: the server may only ever hold one of these.
        var written: [String: Set<[String: JSONValue]>] = [:]
        var deletedSomewhere: Set<String> = []
        var conflictsSeen = 0
        var settledByPolicy = 0
        var operations = 0
        let rounds = Reliability.scale(bounded: 8, long: 80)

        /// Settles waiting conflicts as a person would: keep the local change, or take the server's copy when the
        /// record is gone there. Under `manual`, first checks the conflict holds what the store wrote.
        func settle(_ store: SyncContext) async throws {
            for conflict in try await store.conflicts() {
                if policy == .manual, conflict.operation.kind != .delete {
                    let local = try await store.table(table).read(id: conflict.key.id)
                    #expect(
                        conflict.local.map(ServerRecord.content) == local.map(ServerRecord.content),
                        "the conflict on \(conflict.key) holds the local change")
                }
                do {
                    try await store.resolve(conflict.key, Bool.random(using: &generator) ? .keepLocal : .takeServer)
                } catch StoreError.operationRejected {
                    try await store.resolve(conflict.key, .takeServer)
                }
            }
        }

        for round in 0..<rounds {
            for step in 0..<6 {
                let index = Int.random(in: 0..<3, using: &generator)
                let store = stores[index]
                let id = "r\(Int.random(in: 0..<(6 + round), using: &generator))"
                // Anything after a pending delete is refused until it is pushed (DESIGN §3).
                if await store.pendingOperations.contains(where: { $0.id == id && $0.kind == .delete }) { continue }
                let mark: [String: JSONValue] = [
                    "by": .string("\(index)"), "round": .integer(Int64(round)), "step": .integer(Int64(step))
                ]
                let records = try await store.table(table)
                if var existing = try await records.read(id: id) {
                    existing.merge(mark) { $1 }
                    switch Int.random(in: 0..<5, using: &generator) {
                    case 0:
                        try await records.delete(id: id)
                        deletedSomewhere.insert(id)
                    case 1:
                        try Data(CanonicalJSON.encode(.object(existing), style: .compact))
                            .write(to: URL(fileURLWithPath: store.layout.recordFile(table: table, id: id)))
                        written[id, default: []].insert(ServerRecord.content(existing))
                    default:
                        _ = try await records.update(existing)
                        written[id, default: []].insert(ServerRecord.content(existing))
                    }
                } else if !deletedSomewhere.contains(id),
                    await !store.pendingOperations.contains(where: { $0.id == id })
                {
                    // A deleted id stays taken on the server; a new insert of it would be refused by design.
                    let record = mark.merging(["id": .string(id)]) { $1 }
                    _ = try await records.insert(record)
                    written[id, default: []].insert(ServerRecord.content(record))
                } else {
                    continue
                }
                operations += 1
            }
            for index in stores.indices.shuffled(using: &generator) where Bool.random(using: &generator) {
                let report = try await stores[index].sync(options: options)
                conflictsSeen += report.push.conflicts.count
                settledByPolicy += report.push.settledByPolicy
                try await settle(stores[index])
            }
        }
        // Quiesce: every store syncs until nothing is left to send, then once more to take the last changes.
        for _ in 0..<3 {
            for store in stores {
                let report = try await store.sync(options: options)
                conflictsSeen += report.push.conflicts.count
                settledByPolicy += report.push.settledByPolicy
                try await settle(store)
            }
        }
        for store in stores { _ = try await store.sync(options: options) }

        let rows = try await Reliability.serverRows(server.baseURL, table: table)
        let live = rows.filter { !ServerRecord.isDeleted($0.value) }
        for (id, row) in live {
            #expect(
                written[id]?.contains(ServerRecord.content(row)) == true,
                "\(id) on the server holds a value no store wrote: \(row)")
        }
        for (id, row) in rows where ServerRecord.isDeleted(row) {
            #expect(deletedSomewhere.contains(id), "\(id) is deleted on the server but no store deleted it")
        }
        for (index, store) in stores.enumerated() {
            var local: [String: [String: JSONValue]] = [:]
            for record in try await store.table(table).query() { local[record["id"]!.stringValue!] = record }
            #expect(
                local.mapValues(ServerRecord.content) == live.mapValues(ServerRecord.content),
                "store \(index) equals the server")
            #expect(
                local.mapValues { $0["version"] } == live.mapValues { $0["version"] },
                "store \(index) holds the server's versions")
            #expect(await store.pendingOperations.isEmpty, "store \(index): nothing pending")
            #expect(try await store.conflictKeys().isEmpty, "store \(index): no conflict waiting")
            try await Reliability.checkInvariants(store)
        }
        print(
            """
            convergence (\(policy.rawValue)): \(rounds) rounds, \(operations) operations, \(conflictsSeen) conflicts, \
            \(settledByPolicy) settled by policy, \(live.count) live rows
            """
        )
        // The run met concurrent writes; otherwise it proved nothing about them.
        #expect(conflictsSeen + settledByPolicy > 0)
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }
}
