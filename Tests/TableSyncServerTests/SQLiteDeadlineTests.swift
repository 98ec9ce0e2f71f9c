import GRDB
import Testing
@testable import TableSyncServer

/// The statement time limit that SQLite keeps itself, on the reader's thread (``SQLiteDeadline``): it stops a
/// statement once its deadline is past, whatever the cooperative pool is doing, and leaves the connection as it was.
@Suite struct SQLiteDeadlineTests {
    /// The numbers from 1 on, without end: a statement over them steps SQLite's machine until it is stopped.
    static let numbers = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "

    // Were the deadline not kept, the first statement would never end: the time limit ends the test instead.
    @Test(
        "a statement past its deadline is interrupted; once removed, or before its deadline, statements run",
        .timeLimit(.minutes(1)))
    func interruptsPastTheDeadline() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            let past = SQLiteDeadline(db, until: .now)
            let started = ContinuousClock.now
            do {
                _ = try Int.fetchOne(db, sql: Self.numbers + "SELECT count(*) FROM n")
                Issue.record("the statement ran to its end")
            } catch let error as DatabaseError {
                #expect(error.resultCode == .SQLITE_INTERRUPT)
            }
            // Interrupted at its first progress check; 10 s leaves room for a starved machine's scheduler.
            #expect(ContinuousClock.now - started < .seconds(10))
            past.remove()
            #expect(try Int.fetchOne(db, sql: "SELECT 42") == 42, "the connection is as it was")

            let future = SQLiteDeadline(db, until: .now + .seconds(60))
            defer { future.remove() }
            #expect(
                try Int.fetchOne(db, sql: Self.numbers + "SELECT count(*) FROM (SELECT i FROM n LIMIT 100000)")
                    == 100_000)
        }
    }
}
