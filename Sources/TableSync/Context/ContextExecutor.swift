import Foundation

/// The executor of a ``SyncContext``: its jobs run one after another on a thread of its own.
///
/// A context's work blocks its thread on the disk (`fsync`, `syncfs`, renames) and on `git`. On the task pool, which
/// has as many threads as cores, that would stall every other task of the process while it lasts: on Linux the pool
/// grows by only one thread a second while its threads are blocked, and on Apple platforms it does not grow at all.
/// On a thread of its own, only the context waits. The context's calls into other code (the transport, the server's
/// answers) still run wherever that code runs.
final class ContextExecutor: SerialExecutor {
    private let queue = JobQueue()

    init() {
        let queue = queue
        let executor = asUnownedSerialExecutor()
        Thread {
            // Named from the thread itself, as Linux shows it (at most 15 bytes).
            Thread.current.name = "tablesync-ctx"
            // A job exists only while its context, which holds this executor, does; the thread ends after the last.
            while let job = queue.next() { job.runSynchronously(on: executor) }
        }
        .start()
    }

    deinit { queue.close() }

    func enqueue(_ job: consuming ExecutorJob) {
        queue.append(UnownedJob(job))
    }

    /// The jobs waiting for the thread, in order; closed when the executor goes away.
    private final class JobQueue: @unchecked Sendable {
        // Guarded by `condition`.
        private var jobs: [UnownedJob] = []
        private var head = 0
        private var closed = false
        private let condition = NSCondition()

        func append(_ job: UnownedJob) {
            condition.lock()
            jobs.append(job)
            condition.signal()
            condition.unlock()
        }

        /// The next job, waiting for one; `nil` once the queue is closed and empty.
        func next() -> UnownedJob? {
            condition.lock()
            defer { condition.unlock() }
            while head == jobs.count {
                if closed { return nil }
                condition.wait()
            }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            return job
        }

        func close() {
            condition.lock()
            closed = true
            condition.signal()
            condition.unlock()
        }
    }
}
