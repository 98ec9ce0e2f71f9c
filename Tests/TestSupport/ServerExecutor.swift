import Foundation

/// Threads of their own for the servers that tests run in this process.
///
/// The clients under test do blocking file-system work (`syncfs` above all) on the threads of Swift's
/// cooperative pool, as a command-line tool may; a server sharing those threads answers only when they are free.
/// Right after a build, when the file system still holds gigabytes of unwritten data, one `syncfs` can take
/// seconds, and servers on the shared pool stalled past their clients' timeouts. A server task (and every child
/// task it creates, such as Hummingbird's connection handlers) that prefers this executor runs on these
/// threads instead, so it answers whatever the clients block on, as a server in its own process would.
public final class ServerExecutor: TaskExecutor, @unchecked Sendable {
    /// The executor every in-process test server uses.
    public static let shared = ServerExecutor(threads: 4)

    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private let condition = NSCondition()

    private init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "test-server-\(index)"
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
