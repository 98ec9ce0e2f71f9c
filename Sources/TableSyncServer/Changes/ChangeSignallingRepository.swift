/// A ``RecordRepository`` that tells a ``ChangeNotifier`` which tables each write changed, once it has committed:
/// every write path (single requests and each operation of a batch) goes through ``write(_:)``.
struct ChangeSignallingRepository: RecordRepository {
    let base: any RecordRepository
    let notifier: ChangeNotifier

    func prepare(tables: [TableOptions]) async throws {
        try await base.prepare(tables: tables)
    }

    func record(in scope: RecordScope, id: String) async throws -> StoredRecord? {
        try await base.record(in: scope, id: id)
    }

    func list<Collector: PageCollector>(
        in scope: RecordScope, query: ListQuery, into collector: Collector
    ) async throws -> ListedPage<Collector> {
        try await base.list(in: scope, query: query, into: collector)
    }

    func lastUpdatedAt(in scopes: [RecordScope]) async throws -> [Int64?] {
        try await base.lastUpdatedAt(in: scopes)
    }

    /// A write that stored or removed a row changed its table; one refused, or of a row that was not there, did not.
    func write(_ writes: [RecordWriteRequest]) async throws -> [Result<StoredRecord?, any Error>] {
        let results = try await base.write(writes)
        let changed = zip(writes, results).compactMap { write, result -> String? in
            guard case .success(.some) = result else { return nil }
            return write.table
        }
        if !changed.isEmpty { notifier.tablesChanged(changed) }
        return results
    }
}
