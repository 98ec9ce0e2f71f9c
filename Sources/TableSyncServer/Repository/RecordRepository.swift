import Foundation
import SyncProtocol

/// What a write does to the row it found, decided by the caller while the repository holds the table's
/// write lock (so the decision sees exactly the row it changes).
package enum RecordWrite: Sendable, Hashable {
    /// Store a new record with these properties.
    case insert([String: JSONValue])
    /// Replace the properties of the existing record.
    case update([String: JSONValue])
    /// Replace the properties of the existing, soft-deleted record and clear its `deleted` mark.
    case restore([String: JSONValue])
    /// Mark the existing record `deleted`.
    case softDelete
    /// Clear the existing record's `deleted` mark, its properties as they were (a new version all the same).
    case undelete
    /// Remove the existing record.
    case hardDelete
}

/// Storage for the records of every served table: SQLite (``SQLiteRecordRepository``) and PostgreSQL
/// (``PostgresRecordRepository``) pass the same test suite.
///
/// The contract that incremental pull relies on: each write takes the table's write lock inside its
/// transaction and assigns `updatedAt` there, as `max(now, last + 1 ms)` in whole milliseconds (``UpdatedAtClock``). So
/// within a table no two writes
/// share an `updatedAt`, and commit order is `updatedAt` order: no write becomes visible with an `updatedAt`
/// below one a reader could already see.
package protocol RecordRepository: Sendable {
    /// Creates the schema when missing and registers `tables`, with the indexes of their declared columns. A table
    /// whose declaration changed since the last start has its stored rows checked first (``SchemaTransition``): a
    /// row that does not fit makes it throw a ``ConfigurationError`` naming the record, and nothing changes. Called
    /// once before the server listens.
    func prepare(tables: [TableOptions]) async throws

    /// The record `id` of `scope`, deleted or not.
    func record(in scope: RecordScope, id: String) async throws -> StoredRecord?

    /// A page of the records of `scope` matching `query`, handed to `collector` one at a time as they are read,
    /// which may end the page before `query.top` records (``PageReading``).
    func list<Collector: PageCollector>(
        in scope: RecordScope, query: ListQuery, into collector: Collector
    ) async throws -> ListedPage<Collector>

    /// The latest `updatedAt` of the records of each of `scopes`, deleted ones included, or `nil` for one that has
    /// none: one query per scope on the `(table_name, updated_at, id)` index, on one connection (the change feed's
    /// marks, ``ChangeMarks``).
    func lastUpdatedAt(in scopes: [RecordScope]) async throws -> [Int64?]

    /// Applies `writes` in order, in one transaction holding the write lock of every table they touch (taken
    /// in name order, so two batches never deadlock). Each write sees its row as the writes before it left it,
    /// and `decide` chooses what happens to it; a write whose `decide` throws, or whose values the database refuses
    /// (``DatabaseFailure/isCausedByRequest``), changes nothing and its error is its result, while the others go
    /// on. Returns one result per write: the row as stored (after a hard delete: the removed row, marked deleted),
    /// `nil` when `decide` chose a change to a row that does not exist, or the error. Other database errors roll
    /// everything back and propagate.
    func write(_ writes: [RecordWriteRequest]) async throws -> [Result<StoredRecord?, any Error>]
}

/// One write of ``RecordRepository/write(_:)``: record `id` of `scope`, changed as `decide` says after
/// seeing the current row (`nil` when there is none).
package struct RecordWriteRequest: Sendable {
    /// The records written to: the table's, or one owner's of a per-user table.
    package var scope: RecordScope
    /// The record's id.
    package var id: String
    /// What to do with the row found; an error it throws is the write's result and changes nothing.
    package var decide: @Sendable (StoredRecord?) throws -> RecordWrite

    /// A write of record `id` of `scope`, decided by `decide`.
    package init(scope: RecordScope, id: String, decide: @escaping @Sendable (StoredRecord?) throws -> RecordWrite) {
        self.scope = scope
        self.id = id
        self.decide = decide
    }

    /// A write of record `id` of the shared table `table`.
    package init(table: String, id: String, decide: @escaping @Sendable (StoredRecord?) throws -> RecordWrite) {
        self.init(scope: RecordScope(table: table), id: id, decide: decide)
    }

    /// The table written to, whose write lock the write takes.
    package var table: String { scope.table }
}

extension RecordRepository {
    /// The record `id` of the shared table `table`, deleted or not.
    package func record(table: String, id: String) async throws -> StoredRecord? {
        try await record(in: RecordScope(table: table), id: id)
    }

    /// A page of the shared table `table`'s records matching `query`, handed to `collector`.
    package func list<Collector: PageCollector>(
        table: String, query: ListQuery, into collector: Collector
    ) async throws -> ListedPage<Collector> {
        try await list(in: RecordScope(table: table), query: query, into: collector)
    }

    /// A page of `table`'s records matching `query`, every record of it as stored.
    package func list(table: String, query: ListQuery) async throws -> ListedPage<RecordList> {
        try await list(table: table, query: query, into: RecordList())
    }

    /// Writes record `id` of the shared table `table` as `decide` says.
    package func write(
        table: String, id: String, decide: @escaping @Sendable (StoredRecord?) throws -> RecordWrite
    ) async throws -> StoredRecord? {
        try await write(RecordWriteRequest(table: table, id: id, decide: decide))
    }

    /// Applies one write, as a batch of one whose error is thrown.
    package func write(_ write: RecordWriteRequest) async throws -> StoredRecord? {
        guard let result = try await self.write([write]).first else { throw RepositoryError.missingResult }
        return try result.get()
    }
}

/// The rule for `updatedAt`, in one place for both repositories.
///
/// Every stamp is a whole millisecond, so it prints exactly as `yyyy-MM-ddTHH:mm:ss.fffZ`: clients that keep
/// milliseconds (the iOS SDK, the JS client) round finer values up and then skip the rest of that millisecond.
/// Stamps stay strictly increasing per table, so when more than one write a millisecond arrives the clock moves
/// on by a whole millisecond per write and runs ahead of the wall clock until the load drops.
package enum UpdatedAtClock {
    /// Ticks (100 ns) in one millisecond.
    package static let ticksPerMillisecond: Int64 = 10_000

    /// The `updatedAt` of the next write: now, truncated to the millisecond, or the first whole millisecond
    /// after the table's last write when that is later (also when `last` was stamped finer by an older server).
    package static func next(nowTicks: Int64, last: Int64) -> Int64 {
        max(wholeMillisecond(nowTicks), wholeMillisecond(last) + ticksPerMillisecond)
    }

    /// `ticks` truncated down to a whole millisecond.
    static func wholeMillisecond(_ ticks: Int64) -> Int64 {
        let remainder = ticks % ticksPerMillisecond
        return ticks - (remainder < 0 ? remainder + ticksPerMillisecond : remainder)
    }

    /// The current time in ticks.
    package static func nowTicks() -> Int64 {
        Int64((Date().timeIntervalSince1970 * Double(Timestamp.ticksPerSecond)).rounded(.down))
    }
}
