import Foundation
import Logging
import SyncProtocol
@testable import TableSyncServer
import Testing
import TestSupport

/// With 8 concurrent writers, a reader paging by `(updatedAt, id)` ends with every committed
/// change, and no two writes of a table share an `updatedAt`.
@Suite("updatedAt under concurrent writers")
struct UpdatedAtConcurrencyTests {
    static let writers = 8
    static let writesPerWriter = 60

    @Test("8 writers: every write gets its own updatedAt", arguments: Backend.available)
    func keysetReaderSeesEveryCommit(backend: Backend) async throws {
        let table = uniqueTableName("race")
        try await withRepository(backend) { repository in
            try await repository.prepare(tables: [TableOptions(name: table)])
            let stamps = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for writer in 0..<Self.writers {
                    group.addTask {
                        var stamps: [Int64] = []
                        for index in 0..<Self.writesPerWriter {
                            // Mostly inserts, with updates of the writer's own earlier records mixed in.
                            let id = index % 3 == 2 ? "w\(writer)-\(index - 1)" : "w\(writer)-\(index)"
                            let record = try await repository.write(table: table, id: id) { existing in
                                existing == nil
                                    ? .insert(["n": .integer(Int64(index))]) : .update(["n": .integer(Int64(index))])
                            }
                            stamps.append(try #require(record).updatedAt)
                        }
                        return stamps
                    }
                }
                var all: [Int64] = []
                for try await stamps in group { all += stamps }
                return all
            }
            #expect(stamps.count == Self.writers * Self.writesPerWriter)
            #expect(Set(stamps).count == stamps.count, "two writes share an updatedAt")
            let truth = try await Self.fullState(repository, table: table)
            #expect(truth.count == Self.writers * (Self.writesPerWriter - Self.writesPerWriter / 3))
        }
    }

    @Test("a reader paging during the writes ends with the final state of every record", arguments: Backend.available)
    func concurrentReaderConverges(backend: Backend) async throws {
        let table = uniqueTableName("race")
        try await withRepository(backend) { repository in
            try await repository.prepare(tables: [TableOptions(name: table)])
            let done = ManagedFlag()
            async let seen = Self.pageUntilQuiet(repository, table: table, stopWhen: { done.value })
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<Self.writers {
                    group.addTask {
                        for index in 0..<Self.writesPerWriter {
                            let id = "w\(writer)-\(index % 20)"
                            _ = try await repository.write(table: table, id: id) { existing in
                                existing == nil
                                    ? .insert(["n": .integer(Int64(index))]) : .update(["n": .integer(Int64(index))])
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            done.set()
            let readerState = try await seen
            let truth = try await Self.fullState(repository, table: table)
            #expect(truth.count == Self.writers * 20)
            #expect(
                readerState == truth,
                "the paging reader missed \(truth.filter { readerState[$0.key] != $0.value }.count) changes")
        }
    }

    /// Pages by `(updatedAt, id)` with the keyset filter a client sends, until `stopWhen` holds and a page
    /// after that comes back empty. Returns each id's last seen `updatedAt`.
    static func pageUntilQuiet(
        _ repository: any RecordRepository, table: String, stopWhen: @Sendable () -> Bool
    ) async throws -> [String: Int64] {
        var seen: [String: Int64] = [:]
        var watermark: (updatedAt: Int64, id: String)?
        while true {
            let stopping = stopWhen()
            var query = ListQuery(top: 25)
            query.orderBy = [OrderByKey(property: "updatedAt"), OrderByKey(property: "id")]
            query.includeDeleted = true
            if let watermark {
                let stamp = FilterExpression.literal(.dateTime(Timestamp(ticks: watermark.updatedAt)))
                query.filter = .binary(
                    .or,
                    .binary(.gt, .property("updatedAt"), stamp),
                    .binary(
                        .and, .binary(.eq, .property("updatedAt"), stamp),
                        .binary(.gt, .property("id"), .literal(.string(watermark.id)))))
            }
            let page = try await repository.list(table: table, query: query)
            for record in page.records { seen[record.id] = record.updatedAt }
            if let last = page.records.last { watermark = (last.updatedAt, last.id) }
            if stopping && page.records.isEmpty { return seen }
            if page.records.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
        }
    }

    static func fullState(_ repository: any RecordRepository, table: String) async throws -> [String: Int64] {
        var query = ListQuery(top: 100_000)
        query.includeDeleted = true
        return Dictionary(
            uniqueKeysWithValues: try await repository.list(table: table, query: query).records.map {
                ($0.id, $0.updatedAt)
            })
    }
}

/// A flag one task sets and another polls.
final class ManagedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    var value: Bool { lock.withLock { flag } }
    func set() { lock.withLock { flag = true } }
}

/// Runs `body` with a repository on `backend` (and its PostgreSQL client running meanwhile); in the
/// ``columnsDatabase(_:)`` when the test declares columns.
func withRepository(
    _ backend: Backend, declaringColumns: Bool = false, _ body: @Sendable (any RecordRepository) async throws -> Void
) async throws {
    switch declaringColumns ? try await columnsDatabase(backend) : try backend.database() {
    case .sqlite(let path):
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        try await body(try SQLiteRecordRepository(path: path))
    case .postgres(let location):
        try await withPostgresClient(location) { client in
            try await body(try PostgresRecordRepository(client: client, logger: testLogger))
        }
    }
}
