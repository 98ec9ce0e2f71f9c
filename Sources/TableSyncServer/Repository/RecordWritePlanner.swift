/// The write rule of both repositories, apart from the SQL that carries it out. A batch's writes come in turn:
/// each is stamped by its table's clock as the writes before it left it (``UpdatedAtClock``), its `decide` is shown
/// the row found, and its decision becomes a ``RecordWritePlan``. The repository reads what the planner needs (each
/// table's clock, under the table's write lock, and each write's row), runs each plan's change in its dialect and
/// says how it went; at the end it writes the clocks that moved (``movedClocks``).
///
/// A write whose `decide` throws, or whose change the database refuses, has its error as its result and leaves its
/// table's clock where it was, so the next write of the table takes the stamp it would have taken.
struct RecordWritePlanner {
    /// The time of the batch, in ticks: every write of it is stamped from it.
    let nowTicks: Int64
    /// Each table's last `updatedAt`: as read, then as this batch's stored writes moved it.
    private var clocks: [String: (last: Int64, moved: Bool)] = [:]
    /// One result per write planned so far, in the order of the writes.
    private(set) var results: [Result<StoredRecord?, any Error>] = []

    /// A planner for a batch of `count` writes at `nowTicks`.
    init(nowTicks: Int64, count: Int = 0) {
        self.nowTicks = nowTicks
        results.reserveCapacity(count)
    }

    /// Whether `table`'s clock is yet to be read (``readClock(of:last:)``).
    func needsClock(of table: String) -> Bool { clocks[table] == nil }

    /// Notes `last`, the `updatedAt` in `table`'s clock row, read under the table's write lock.
    mutating func readClock(of table: String, last: Int64) { clocks[table] = (last, false) }

    /// The plan of `write`, whose row was found as `existing`; `nil` when its `decide` threw, whose error is then its
    /// result. Throws ``RepositoryError/unknownTable(_:)`` when its table's clock was not read: the table has no
    /// clock row, so ``RecordRepository/prepare(tables:)`` never registered it.
    mutating func plan(_ write: RecordWriteRequest, existing: StoredRecord?) throws(RepositoryError) -> RecordWritePlan?
    {
        guard let last = clocks[write.table]?.last else { throw .unknownTable(write.table) }
        let decision: RecordWrite
        do {
            decision = try write.decide(existing)
        } catch {
            results.append(.failure(error))
            return nil
        }
        let stamp = UpdatedAtClock.next(nowTicks: nowTicks, last: last)
        return RecordWritePlan(decision, table: write.table, id: write.id, existing: existing, stamp: stamp)
    }

    /// Notes that `plan`'s change is stored: its result is the write's, and its table's clock moves on to its stamp.
    mutating func stored(_ plan: RecordWritePlan) {
        results.append(.success(plan.result))
        clocks[plan.table] = (plan.stamp, true)
    }

    /// Notes that the database refused a plan's change for its values (``DatabaseFailure/isCausedByRequest``) and
    /// changed nothing: `error` is the write's result, and its table's clock stays.
    mutating func refused(_ error: any Error) { results.append(.failure(error)) }

    /// The tables whose clocks the batch moved, in name order, each with its last stamp: the clock rows to write
    /// before the transaction commits.
    var movedClocks: [(table: String, last: Int64)] {
        clocks.filter(\.value.moved).map { ($0.key, $0.value.last) }.sorted { $0.table < $1.table }
    }
}
