import Dispatch
import Foundation
import Logging
import Synchronization

/// Ends the process a fixed time after the first SIGTERM or SIGINT, whatever still runs then, so that a stop ends the
/// server in bounded time under any load: also when cancelled requests are slow to end, as when the machine or the
/// database is too busy to act on their cancels at once, or a write waits for a lock held outside the server.
///
/// It counts from the signal, on a dispatch queue of its own: the stop itself (swift-service-lifecycle) runs on the
/// pool of threads that serves requests, which a server busy with long reads may not give it for a while.
/// swift-service-lifecycle's own cancellation limit would end such a process with a `fatalError`: the crash report the
/// Swift runtime then writes can take longer than the stop itself on a busy machine, and the exit status says the
/// server crashed. Here the process logs what happened and exits with status 0, as after any other stop.
final class ShutdownDeadline {
    private let sources: [any DispatchSourceSignal]
    private let flags = Flags()

    /// What the signal handlers and the timer share.
    private final class Flags: Sendable {
        /// Set by the first signal.
        let armed = Mutex(false)
        /// Set by ``ShutdownDeadline/disarm()``.
        let disarmed = Mutex(false)
    }

    /// Arms the deadline: `bound` after the first of `signals`, the process ends.
    init(bound: Duration, logger: Logger, signals: [Int32] = [SIGTERM, SIGINT]) {
        let queue = DispatchQueue(label: "tablesync-server.shutdown-deadline")
        let flags = flags
        sources = signals.map { number in
            // The signal is handled here and by the service group, not by its default action.
            signal(number, SIG_IGN)
            return DispatchSource.makeSignalSource(signal: number, queue: queue)
        }
        for source in sources {
            source.setEventHandler {
                let first = flags.armed.withLock { armed in
                    defer { armed = true }
                    return !armed
                }
                guard first else { return }
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(bound / .nanoseconds(1)))) {
                    guard !flags.disarmed.withLock({ $0 }) else { return }
                    logger.warning(
                        "requests were still running \(bound) after the stop began; the process ends without them")
                    fflush(nil)
                    _exit(0)
                }
            }
            source.resume()
        }
    }

    /// The server has stopped by itself: the process ends as usual.
    func disarm() {
        flags.disarmed.withLock { $0 = true }
        for source in sources { source.cancel() }
    }
}
