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
        let width = ProcessInfo.processInfo.activeProcessorCount
        // Far more than the monitor adds while the call runs: on the shared threads, the call would come last.
        let blockers = 12 * width
        let started = Mutex(0)
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<blockers {
            DispatchQueue.global().async {
                started.withLock { $0 += 1 }
                // A bound, so that a failing run cannot hang the suite.
                _ = release.wait(timeout: .now() + 60)
            }
        }
        let startedWhenItRan = await runOnThreadOfItsOwn {
            // The shared threads are all blocked once as many blockers as cores have started.
            let limit = ContinuousClock.now + .seconds(60)
            while started.withLock({ $0 }) < width && ContinuousClock.now < limit { usleep(1_000) }
            let count = started.withLock { $0 }
            for _ in 0..<blockers { release.signal() }
            return count
        }
        #expect(
            startedWhenItRan >= width && startedWhenItRan < blockers,
            "\(startedWhenItRan) of \(blockers) blockers had started when the call ran")
    }

    @Test("a store's work runs on the store's own thread while every shared thread is blocked")
    func storeWorkRunsWhileTheSharedThreadsAreBlocked() async throws {
        let (directory, context) = try makeStore()
        let width = ProcessInfo.processInfo.activeProcessorCount
        let blockers = 12 * width
        let started = Mutex(0)
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<blockers {
            DispatchQueue.global().async {
                started.withLock { $0 += 1 }
                _ = release.wait(timeout: .now() + 60)
            }
        }
        /// Run by the context, as its own methods are: on the shared threads it would come after the blockers.
        func releaseOnceTheSharedThreadsAreBlocked(_ context: isolated SyncContext) -> (started: Int, thread: String?) {
            let limit = ContinuousClock.now + .seconds(60)
            while started.withLock({ $0 }) < width && ContinuousClock.now < limit { usleep(1_000) }
            let count = started.withLock { $0 }
            for _ in 0..<blockers { release.signal() }
            return (count, Thread.current.name)
        }
        let ran = await releaseOnceTheSharedThreadsAreBlocked(context)
        // The thread is the store's: on a shared one it ran only once libdispatch's monitor added a thread (about 1 s).
        #expect(ran.thread == "tablesync store")
        #expect(
            ran.started >= width && ran.started < blockers,
            "\(ran.started) of \(blockers) blockers had started when it ran")
        await context.close()
        _ = directory
    }
}
