import GRDB
import GRDBSQLite

/// The statement time limit on one SQLite connection, kept by SQLite itself for the length of a read: its progress
/// handler looks at the clock every ``instructionsBetweenChecks`` instructions and interrupts the statement once the
/// deadline is past (SQLITE_INTERRUPT, which reads as a time-out), or once the read's task is cancelled when the read
/// runs on a thread of its own (``IdlePriorityThread``), where GRDB cannot see the task.
///
/// ``StatementTimeLimit``'s timer alone is a task on the cooperative pool: when other work holds the pool's threads,
/// it fires late, and a read that should have been stopped runs on. The handler runs on the reader's own thread, so
/// the limit holds however busy the pool is; the timer still ends a read whose time goes outside SQLite's steps.
final class SQLiteDeadline {
    /// About a few microseconds of SQLite's work between two looks at the clock.
    static let instructionsBetweenChecks: Int32 = 1000

    private let connection: OpaquePointer?
    private let deadline: ContinuousClock.Instant
    private let cancellation: IdlePriorityThread.Cancellation?

    /// Installs the handler on `db`'s connection until ``remove()``; the read must end at `deadline`, or when
    /// `cancellation` says so.
    init(_ db: Database, until deadline: ContinuousClock.Instant, cancellation: IdlePriorityThread.Cancellation? = nil)
    {
        connection = db.sqliteConnection
        self.deadline = deadline
        self.cancellation = cancellation
        sqlite3_progress_handler(
            connection, Self.instructionsBetweenChecks,
            { context in
                guard let context else { return 0 }
                let limit = Unmanaged<SQLiteDeadline>.fromOpaque(context).takeUnretainedValue()
                return limit.cancellation?.isCancelled == true || ContinuousClock.now >= limit.deadline ? 1 : 0
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Takes the handler off the connection, which other reads use next.
    func remove() {
        sqlite3_progress_handler(connection, 0, nil, nil)
    }
}
