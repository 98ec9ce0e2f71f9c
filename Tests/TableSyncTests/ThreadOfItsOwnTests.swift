import Dispatch
import Foundation
import Synchronization
import Testing
@testable import TableSync

/// `runOnThreadOfItsOwn` and a store's own executor (``StoreExecutor``): blocking work does not wait for the threads
/// that Dispatch's global queues and the cooperative pool share on Linux, nor holds them up.
@Suite struct ThreadOfItsOwnTests {
    @Test(
        """
        a blocking call runs while every shared Dispatch thread is blocked, not behind the work queued there \
        (which libdispatch's monitor gives one more thread a second)
        """)
    func runsWhileTheSharedThreadsAreBlocked() async {
        let blockers = SharedThreadBlockers()
        let startedWhenItRan = await runOnThreadOfItsOwn { blockers.releaseOnceAllAreBlocked() }
        #expect(
            blockers.blockedAll(startedWhenItRan),
            "\(startedWhenItRan) of \(blockers.count) blockers had started when the call ran")
    }

    @Test("a store's work runs on the store's own thread while every shared thread is blocked")
    func storeWorkRunsWhileTheSharedThreadsAreBlocked() async throws {
        let (directory, context) = try makeStore()
        let blockers = SharedThreadBlockers()
        /// Run by the context, as its own methods are: on the shared threads it would come after the blockers.
        func release(_ context: isolated SyncContext) -> (started: Int, thread: String?) {
            (blockers.releaseOnceAllAreBlocked(), Thread.current.name)
        }
        let ran = await release(context)
        // The thread is the store's: on a shared one it ran only once libdispatch's monitor added a thread (about 1 s).
        #expect(ran.thread == "tablesync store")
        #expect(
            blockers.blockedAll(ran.started), "\(ran.started) of \(blockers.count) blockers had started when it ran")
        await context.close()
        _ = directory
    }
}

/// Work queued on Dispatch's global queues that blocks each thread it gets until released: far more of it than the
/// monitor adds threads while a test runs, so that on the shared threads anything queued after it would come last.
private final class SharedThreadBlockers: Sendable {
    /// As many threads as cores are shared; the blockers are twelve times that.
    let width = ProcessInfo.processInfo.activeProcessorCount
    var count: Int { 12 * width }
    private let started = Mutex(0)
    private let release = DispatchSemaphore(value: 0)

    init() {
        for _ in 0..<count {
            DispatchQueue.global().async {
                self.started.withLock { $0 += 1 }
                // A bound, so that a failing run cannot hang the suite.
                _ = self.release.wait(timeout: .now() + 60)
            }
        }
    }

    /// Waits until as many blockers as cores have started (the shared threads are all blocked), releases them all,
    /// and returns how many had started.
    func releaseOnceAllAreBlocked() -> Int {
        let limit = ContinuousClock.now + .seconds(60)
        while started.withLock({ $0 }) < width && ContinuousClock.now < limit { usleep(1_000) }
        let count = started.withLock { $0 }
        for _ in 0..<self.count { release.signal() }
        return count
    }

    /// Whether `started` blockers at the release mean the shared threads were all blocked, and the work ran before
    /// the blockers queued behind them.
    func blockedAll(_ started: Int) -> Bool { started >= width && started < count }
}
