import Dispatch
import Foundation
import Synchronization

/// Where an open store's work runs: a serial executor with a thread of its own, one per ``SyncContext``.
///
/// The context's work blocks its thread by nature: `fsync` and `syncfs`, renames, the `git` commands it waits for.
/// On the threads every Swift task of the process shares (as many as the machine has cores, see
/// ``runOnThreadOfItsOwn(_:)``) each such wait would hold up other work (a server's answers in the same process,
/// another store's sync, the decoding of the next page of this one); on this thread it holds up only the store,
/// whose work is serial anyway. GRDB gives each database connection a serial queue of its own for the same reason.
///
/// Jobs run in the order they came. The thread keeps the executor until ``finish()`` (the context's `deinit`, once no
/// job of its own can come), then ends after the job it is running.
final class StoreExecutor: SerialExecutor {
    private let jobs = JobQueue()

    init() {
        let thread = Thread { [self] in
            // Named here: on Linux a name given before the start is not the system's, which `top -H` and a
            // debugger show (a new thread otherwise keeps its creator's).
            Thread.current.name = "tablesync store"
            let executor = asUnownedSerialExecutor()
            while let job = jobs.next() { job.runSynchronously(on: executor) }
        }
        thread.start()
    }

    /// Lets the thread end once the jobs waiting have run.
    func finish() {
        jobs.close()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        jobs.push(UnownedJob(job))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}

/// The jobs waiting for a ``StoreExecutor``'s thread, in order; the thread waits on a semaphore that counts them.
private final class JobQueue: Sendable {
    private let state = Mutex<(waiting: [UnownedJob], closed: Bool)>(([], false))
    private let available = DispatchSemaphore(value: 0)

    func push(_ job: UnownedJob) {
        state.withLock { $0.waiting.append(job) }
        available.signal()
    }

    /// Lets the thread end once the jobs still waiting have run.
    func close() {
        state.withLock { $0.closed = true }
        available.signal()
    }

    /// The next job, once there is one; `nil` once closed with none left.
    func next() -> UnownedJob? {
        while true {
            available.wait()
            let (job, closed) = state.withLock { state -> (UnownedJob?, Bool) in
                state.waiting.isEmpty ? (nil, state.closed) : (state.waiting.removeFirst(), false)
            }
            if let job { return job }
            if closed { return nil }
        }
    }
}
