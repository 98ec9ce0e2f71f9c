import CFileSystem
import Foundation
import Synchronization

/// Runs blocking work on a thread of its own that yields the processor to every other thread: on Linux the thread
/// takes the `SCHED_IDLE` policy, so the kernel runs it only while no other thread wants a processor, and a thread
/// that wakes takes the processor from it at once.
///
/// Such a thread hardly runs on a machine whose processors other programs keep busy. A watch therefore looks at the
/// thread's processor time (in `/proc`) every ``starvationWindow``: when the thread has run for less than
/// ``starvedShare`` of the time since the run began, the run gives it up and answers `nil`, and the caller does the
/// work again at the normal priority. (A thread that waits for a disk or a lock is given up too, and its work done
/// again as it would have been without this type.) A thread cannot raise its priority again without privileges, so
/// each run has a new thread, never a shared one. Work that holds a lock others need would hold it while it waits
/// for a processor; the work run here takes only its own SQLite connection.
enum IdlePriorityThread {
    /// How often the watch looks at the thread.
    static let starvationWindow = Duration.milliseconds(250)
    /// The share of a processor below which the thread counts as starved.
    static let starvedShare = 0.2

    /// Whether this system schedules threads by `SCHED_IDLE` and tells their processor time; where it does not,
    /// callers do their work at the normal priority.
    static let isAvailable = ProcessorTime.isAvailable

    /// Runs `work` on a new idle-priority thread and returns what it returns, or `nil` when the thread was starved of
    /// processors and given up. When the calling task is cancelled, or the thread is given up, `work`'s
    /// ``Cancellation`` says so, for the work to end early; the run answers without waiting for it.
    static func run<Value: Sendable>(
        _ work: @escaping @Sendable (Cancellation) throws -> Value
    ) async throws -> Value? {
        try await Run<Value>().result(of: work)
    }

    /// Whether the task that asked for a run was cancelled or the run gave its thread up, for work that cannot ask
    /// its task.
    final class Cancellation: Sendable {
        private let cancelled = Atomic(false)

        /// `true` once the run no longer waits for the work.
        var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

        fileprivate func cancel() { cancelled.store(true, ordering: .relaxed) }
    }

    /// One run: its thread, the watch's thread, and its outcome, decided once by whichever comes first of the work's
    /// end, the calling task's cancellation and the watch. The watch is a thread of its own at the normal priority,
    /// so that it looks on time however busy the task pool is.
    private final class Run<Value: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Value?, any Error>?
            var outcome: Result<Value?, any Error>?
        }

        let cancellation = Cancellation()
        private let state = Mutex(State())
        private let threadID = Atomic<Int32>(0)
        /// Signalled when the outcome is decided, to end the watch.
        private let decided = DispatchSemaphore(value: 0)

        /// Starts `work` on the thread, and the watch, and waits for the outcome.
        func result(of work: @escaping @Sendable (Cancellation) throws -> Value) async throws -> Value? {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    wait(with: continuation)
                    Thread { [self] in
                        threadID.store(tablesync_thread_id(), ordering: .relaxed)
                        IdlePriorityThread.lowerPriority()
                        let result = Result { try work(cancellation) }
                        end(result.map(Optional.some))
                    }
                    .start()
                    Thread { [self] in watchForStarvation() }.start()
                }
            } onCancel: {
                end(.failure(CancellationError()))
            }
        }

        /// Gives the thread up once it has run for less than ``starvedShare`` of the time since the run began; returns
        /// then, or when the outcome is decided otherwise.
        private func watchForStarvation() {
            let clock = ContinuousClock()
            let started = clock.now
            let window = DispatchTimeInterval.nanoseconds(Int(starvationWindow / .nanoseconds(1)))
            while decided.wait(timeout: .now() + window) == .timedOut {
                let id = threadID.load(ordering: .relaxed)
                // A thread not started yet has had no processor either; one that has ended has no figures left.
                let processorTime = id > 0 ? ProcessorTime.ofThread(id) : .zero
                if let processorTime, processorTime < (clock.now - started) * starvedShare {
                    end(.success(nil))
                }
            }
        }

        private func wait(with continuation: CheckedContinuation<Value?, any Error>) {
            let outcome = state.withLock { state in
                if state.outcome == nil { state.continuation = continuation }
                return state.outcome
            }
            if let outcome { continuation.resume(with: outcome) }
        }

        /// Decides the outcome unless it is decided; an outcome other than the work's own gives the thread up.
        private func end(_ outcome: Result<Value?, any Error>) {
            let continuation = state.withLock { state -> CheckedContinuation<Value?, any Error>?? in
                guard state.outcome == nil else { return nil }
                state.outcome = outcome
                defer { state.continuation = nil }
                return .some(state.continuation)
            }
            guard let continuation else { return }
            cancellation.cancel()
            decided.signal()
            continuation?.resume(with: outcome)
        }
    }

    /// Puts the calling thread under `SCHED_IDLE` (Linux); elsewhere it keeps its priority.
    private static func lowerPriority() {
        #if os(Linux)
        var parameters = sched_param()
        parameters.sched_priority = 0
        // SCHED_IDLE, which Glibc's module does not export; lowering needs no privilege.
        _ = pthread_setschedparam(pthread_self(), 5, &parameters)
        #endif
    }

    /// The processor time a thread of this process has had: the first figure of its `schedstat` in `/proc`.
    enum ProcessorTime {
        /// Whether `/proc` tells threads' processor times.
        static let isAvailable = ofThread(tablesync_thread_id()) != nil

        static func ofThread(_ id: Int32) -> Duration? {
            #if os(Linux)
            let descriptor = open("/proc/self/task/\(id)/schedstat", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var bytes = [UInt8](repeating: 0, count: 96)
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            let digits = bytes[..<count].prefix(while: { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            guard let nanoseconds = Int64(String(decoding: digits, as: UTF8.self)) else { return nil }
            return .nanoseconds(nanoseconds)
            #else
            return nil
            #endif
        }
    }
}
