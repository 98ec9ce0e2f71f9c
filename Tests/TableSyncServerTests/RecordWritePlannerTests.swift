import SyncProtocol
import Testing
@testable import TableSyncServer

/// The write rule both repositories follow, without a database: what a decision does to the row found
/// (``RecordWritePlan``), how a batch's writes are stamped and its clocks moved (``RecordWritePlanner``), and the SQL
/// that carries a change out in each dialect (``RecordWriteSQL``).
@Suite("Record write planner")
struct RecordWritePlannerTests {
    /// A whole millisecond in ticks, the clock's step.
    static let millisecond = UpdatedAtClock.ticksPerMillisecond
    /// The batch's time: well after every clock below, so that a first write is stamped at it.
    static let now: Int64 = 17_000_000_000_000_000
    static let stamp = now + 5 * millisecond

    static let live = StoredRecord(
        id: "a", createdAt: 16_000_000_000_000_000, updatedAt: 16_500_000_000_000_000, deleted: false,
        properties: ["text": "old"])
    static var deleted: StoredRecord {
        var record = live
        record.deleted = true
        return record
    }
    static let newProperties: [String: JSONValue] = ["text": "new", "n": 2]
    static let newBody = #"{"n":2,"text":"new"}"#

    /// Each decision on the row it finds: the change to the row and the record the write answers.
    static let decisions: [(name: String, RecordWrite, StoredRecord?, StoredRowChange?, StoredRecord?)] = [
        (
            "insert where there is no row", .insert(newProperties), nil,
            .insert(id: "a", stamp: stamp, body: newBody),
            StoredRecord(id: "a", createdAt: stamp, updatedAt: stamp, deleted: false, properties: newProperties)
        ),
        (
            "update of a live row keeps createdAt", .update(newProperties), live,
            .update(id: "a", body: newBody, updatedAt: stamp, deleted: false),
            StoredRecord(
                id: "a", createdAt: live.createdAt, updatedAt: stamp, deleted: false, properties: newProperties)
        ),
        (
            "update of a deleted row leaves it deleted", .update(newProperties), deleted,
            .update(id: "a", body: newBody, updatedAt: stamp, deleted: true),
            StoredRecord(
                id: "a", createdAt: live.createdAt, updatedAt: stamp, deleted: true, properties: newProperties)
        ),
        (
            "restore of a deleted row clears its mark", .restore(newProperties), deleted,
            .update(id: "a", body: newBody, updatedAt: stamp, deleted: false),
            StoredRecord(
                id: "a", createdAt: live.createdAt, updatedAt: stamp, deleted: false, properties: newProperties)
        ),
        (
            "soft delete marks the row and keeps its body", .softDelete, live,
            .mark(id: "a", deleted: true, updatedAt: stamp),
            StoredRecord(
                id: "a", createdAt: live.createdAt, updatedAt: stamp, deleted: true, properties: live.properties)
        ),
        (
            "undelete clears the mark and keeps the body", .undelete, deleted,
            .mark(id: "a", deleted: false, updatedAt: stamp),
            StoredRecord(
                id: "a", createdAt: live.createdAt, updatedAt: stamp, deleted: false, properties: live.properties)
        ),
        (
            "hard delete answers the removed row, marked deleted", .hardDelete, live, .delete(id: "a"),
            StoredRecord(
                id: "a", createdAt: live.createdAt, updatedAt: stamp, deleted: true, properties: live.properties)
        ),
        ("update of a missing row changes nothing", .update(newProperties), nil, nil, nil),
        ("restore of a missing row changes nothing", .restore(newProperties), nil, nil, nil),
        ("soft delete of a missing row changes nothing", .softDelete, nil, nil, nil),
        ("undelete of a missing row changes nothing", .undelete, nil, nil, nil),
        ("hard delete of a missing row changes nothing", .hardDelete, nil, nil, nil)
    ]

    @Test("a decision's change to the row found and its result", arguments: decisions.indices)
    func decisionBecomesChangeAndResult(index: Int) {
        let (name, decision, existing, change, result) = Self.decisions[index]
        let plan = RecordWritePlan(decision, table: "items", id: "a", existing: existing, stamp: Self.stamp)
        #expect(plan.change == change, "\(name)")
        #expect(plan.result == result, "\(name)")
        #expect(plan.stamp == Self.stamp, "\(name)")
        #expect(plan.table == "items", "\(name)")
    }

    /// The failure of a write whose precondition does not hold.
    struct PreconditionFailed: Error, Equatable {}

    /// A write of record `a` of `table` that soft-deletes it when it finds `expected`, and fails otherwise (a
    /// precondition on the row found).
    static func softDelete(table: String = "items", expecting expected: StoredRecord?) -> RecordWriteRequest {
        RecordWriteRequest(table: table, id: "a") { existing in
            guard existing == expected else { throw PreconditionFailed() }
            return .softDelete
        }
    }

    @Test("decide sees the row found; a met precondition plans its change at the next stamp")
    func preconditionMet() throws {
        var planner = RecordWritePlanner(nowTicks: Self.now)
        planner.readClock(of: "items", last: 0)
        let plan = try #require(try planner.plan(Self.softDelete(expecting: Self.live), existing: Self.live))
        #expect(plan.change == .mark(id: "a", deleted: true, updatedAt: Self.now))
        planner.stored(plan)
        #expect(planner.results.count == 1)
        #expect(try planner.results[0].get() == plan.result)
        #expect(planner.movedClocks.map(\.table) == ["items"])
        #expect(planner.movedClocks.map(\.last) == [Self.now])
    }

    @Test("a failed precondition is the write's result and leaves the clock where it was")
    func preconditionFailed() throws {
        var planner = RecordWritePlanner(nowTicks: Self.now)
        let last = Self.now + 3 * Self.millisecond
        planner.readClock(of: "items", last: last)
        let failed = try planner.plan(Self.softDelete(expecting: Self.deleted), existing: Self.live)
        #expect(failed == nil)
        #expect(throws: PreconditionFailed.self) { try planner.results[0].get() }
        #expect(planner.movedClocks.isEmpty)
        let next = try #require(try planner.plan(Self.softDelete(expecting: Self.live), existing: Self.live))
        #expect(next.stamp == last + Self.millisecond)
    }

    @Test("the writes of one table are stamped one whole millisecond apart, after the table's clock")
    func clockAdvancesPerWrite() throws {
        var planner = RecordWritePlanner(nowTicks: Self.now + 1234)
        planner.readClock(of: "items", last: 0)
        planner.readClock(of: "notes", last: Self.now + 7 * Self.millisecond + 99)
        var stamps: [String: [Int64]] = [:]
        for table in ["items", "notes", "items", "notes"] {
            let write = RecordWriteRequest(table: table, id: "a") { _ in .insert([:]) }
            let plan = try #require(try planner.plan(write, existing: nil))
            planner.stored(plan)
            stamps[table, default: []].append(plan.stamp)
        }
        #expect(stamps["items"] == [Self.now, Self.now + Self.millisecond])
        #expect(stamps["notes"] == [Self.now + 8 * Self.millisecond, Self.now + 9 * Self.millisecond])
        #expect(planner.movedClocks.map(\.table) == ["items", "notes"])
        #expect(planner.movedClocks.map(\.last) == [Self.now + Self.millisecond, Self.now + 9 * Self.millisecond])
    }

    @Test("a change the database refuses is the write's result and leaves the clock where it was")
    func refusedChange() throws {
        var planner = RecordWritePlanner(nowTicks: Self.now)
        planner.readClock(of: "items", last: 0)
        let write = RecordWriteRequest(table: "items", id: "a") { _ in .insert(["n": 1]) }
        let refused = try #require(try planner.plan(write, existing: nil))
        planner.refused(PreconditionFailed())
        #expect(throws: PreconditionFailed.self) { try planner.results[0].get() }
        #expect(planner.movedClocks.isEmpty)
        let retried = try #require(try planner.plan(write, existing: nil))
        #expect(retried.stamp == refused.stamp)
    }

    @Test("a write that finds no row to change answers nil and still moves its table's clock")
    func missingRecordTakesAStamp() throws {
        var planner = RecordWritePlanner(nowTicks: Self.now)
        planner.readClock(of: "items", last: 0)
        let write = RecordWriteRequest(table: "items", id: "a") { _ in .undelete }
        let plan = try #require(try planner.plan(write, existing: nil))
        #expect(plan.change == nil)
        planner.stored(plan)
        #expect(try planner.results[0].get() == nil)
        #expect(planner.movedClocks.map(\.last) == [Self.now])
    }

    @Test("a write to a table whose clock was never read is an unknown table, decided by no one")
    func unknownTable() {
        var planner = RecordWritePlanner(nowTicks: Self.now)
        #expect(planner.needsClock(of: "items"))
        let write = RecordWriteRequest(table: "items", id: "a") { _ in
            Issue.record("decide ran for a table without a clock")
            return .hardDelete
        }
        do {
            _ = try planner.plan(write, existing: nil)
            Issue.record("a write to a table without a clock was planned")
        } catch {
            guard case .unknownTable(let table) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(table == "items")
        }
        #expect(planner.results.isEmpty)
    }

    @Test("the SQL of each change, in each dialect")
    func changeSQL() {
        let insert = StoredRowChange.insert(id: "a", stamp: 7, body: "{}")
        #expect(
            RecordWriteSQL.statement(insert, rows: "items", dialect: .postgres)
                == SQLStatement(
                    sql: """
                        INSERT INTO tablesync_records (table_name, id, created_at, updated_at, deleted, body) VALUES \
                        ($1, $2, $3, $4, FALSE, CAST($5 AS JSONB))
                        """,
                    bindings: [.text("items"), .text("a"), .integer(7), .integer(7), .text("{}")]))
        let update = StoredRowChange.update(id: "a", body: "{}", updatedAt: 9, deleted: true)
        #expect(
            RecordWriteSQL.statement(update, rows: "items", dialect: .sqlite)
                == SQLStatement(
                    sql: """
                        UPDATE tablesync_records SET body = ?1, updated_at = ?2, deleted = ?3 WHERE table_name = ?4 \
                        AND id = ?5
                        """,
                    bindings: [.text("{}"), .integer(9), .bool(true), .text("items"), .text("a")]))
        let mark = StoredRowChange.mark(id: "a", deleted: false, updatedAt: 9)
        #expect(
            RecordWriteSQL.statement(mark, rows: "items", dialect: .postgres)
                == SQLStatement(
                    sql: "UPDATE tablesync_records SET deleted = $1, updated_at = $2 WHERE table_name = $3 AND id = $4",
                    bindings: [.bool(false), .integer(9), .text("items"), .text("a")]))
        #expect(
            RecordWriteSQL.statement(.delete(id: "a"), rows: "items", dialect: .sqlite)
                == SQLStatement(
                    sql: "DELETE FROM tablesync_records WHERE table_name = ?1 AND id = ?2",
                    bindings: [.text("items"), .text("a")]))
    }

    @Test("a clock is read plainly in SQLite and under its row's lock in PostgreSQL")
    func clockSQL() {
        #expect(
            RecordWriteSQL.clock(of: "items", dialect: .sqlite)
                == SQLStatement(
                    sql: "SELECT last_updated_at FROM tablesync_table_clock WHERE table_name = ?1",
                    bindings: [.text("items")]))
        #expect(
            RecordWriteSQL.clock(of: "items", dialect: .postgres)
                == SQLStatement(
                    sql: """
                        UPDATE tablesync_table_clock SET last_updated_at = last_updated_at WHERE table_name = $1 \
                        RETURNING last_updated_at
                        """,
                    bindings: [.text("items")]))
        #expect(
            RecordWriteSQL.setClock(of: "items", to: 42, dialect: .postgres)
                == SQLStatement(
                    sql: "UPDATE tablesync_table_clock SET last_updated_at = $1 WHERE table_name = $2",
                    bindings: [.integer(42), .text("items")]))
    }
}
