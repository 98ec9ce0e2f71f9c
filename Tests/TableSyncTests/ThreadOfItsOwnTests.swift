import Dispatch
import Foundation
import Synchronization
import Testing
@testable import TableSync

/// Far more blocking items on Dispatch's global queue than the machine has cores, each waiting until released (60 s
/// at most, so that a failing run cannot hang the suite): on Linux they block the threads that the global queues and
/// the task pool share, and work queued behind them waits for libdispatch's monitor, which adds a thread a second.
final class SharedThreadBlockers: Sendable {
    /// How many blockers were queued.
    let count = 12 * ProcessInfo.processInfo.activeProcessorCount
    private let started = Mutex(0)
    private let release = DispatchSemaphore(value: 0)

    init() {
        for _ in 0..<count {
            DispatchQueue.global().async { [self] in
                started.withLock { $0 += 1 }
                _ = release.wait(timeout: .now() + 60)
            }
        }
    }

    /// Waits until every shared thread is blocked (as many blockers started as cores), releases all the blockers and
    /// returns how many had started. Called from a thread that is not a shared one, it returns near the number of
    /// cores; called from work queued on the shared threads, it runs only after all the blockers started.
    func releaseOnceAllBlocked() -> Int {
        let width = ProcessInfo.processInfo.activeProcessorCount
        let limit = ContinuousClock.now + .seconds(60)
        while started.withLock({ $0 }) < width && ContinuousClock.now < limit { usleep(1_000) }
        let count = started.withLock { $0 }
        for _ in 0..<self.count { release.signal() }
        return count
    }
}

/// `runOnThreadOfItsOwn` and the context's executor: blocking work does not wait for the threads that Dispatch's
/// global queues and the task pool share on Linux.
@Suite struct ThreadOfItsOwnTests {
    @Test(
        """
        a blocking call runs while every shared Dispatch thread is blocked, not behind the work queued there \
        (which libdispatch's monitor gives one more thread a second)
        """)
    func runsWhileTheSharedThreadsAreBlocked() async {
        let blockers = SharedThreadBlockers()
        let startedWhenItRan = await runOnThreadOfItsOwn { blockers.releaseOnceAllBlocked() }
        #expect(
            startedWhenItRan >= ProcessInfo.processInfo.activeProcessorCount && startedWhenItRan < blockers.count,
            "\(startedWhenItRan) of \(blockers.count) blockers had started when the call ran")
    }

    // Stands for an app that embeds the library: a sync's waits for the disk and for git must not hold the threads
    // that the app's other tasks share.
    @Test("a context's work runs on a thread of its own, not on the threads the task pool shares")
    func contextRunsOnItsOwnThread() async throws {
        let (directory, context) = try makeStore()
        defer { withExtendedLifetime(directory) {} }
        // Called from the pool, an actor on the default executor runs on the caller's pool thread.
        let thread = await context.runIsolated { Thread.current.name }
        #expect(thread == "tablesync-ctx")
        let table = try await context.table("todo")
        _ = try await table.insert(["id": "a", "text": "on the context's thread"])
        #expect(try await table.read(id: "a")?["text"] == "on the context's thread")
    }
}

extension SyncContext {
    /// Runs `body` isolated to the context, on its executor.
    fileprivate func runIsolated<Value: Sendable>(_ body: @Sendable () -> Value) -> Value { body() }
}
