import Foundation
import Logging
import ServiceLifecycle

/// Ends the process a fixed time after a graceful stop began, whatever still runs then, so that SIGTERM ends the
/// server in bounded time under any load: also when cancelled requests are slow to end, as when the machine or the
/// database is too busy to act on their cancels at once, or a write waits for a lock held outside the server.
///
/// swift-service-lifecycle's own cancellation limit ends such a process with a `fatalError`: the crash report the
/// Swift runtime then writes can take longer than the stop itself on a busy machine, and the exit status says the
/// server crashed. Here the process logs what happened and exits with status 0, as after any other stop.
struct ShutdownDeadline: Service {
    /// From the start of the graceful stop to the end of the process.
    let bound: Duration
    let logger: Logger

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled before any stop began: the group is ending for another reason, which bounds itself.
            return
        }
        let bound = bound
        let logger = logger
        // A thread of its own: the stop cancels the tasks of the services, and the cooperative pool may be busy.
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: Double(bound.components.seconds) + Double(bound.components.attoseconds) / 1e18)
            logger.warning("requests were still running \(bound) after the stop began; the process ends without them")
            fflush(nil)
            _exit(0)
        }
    }
}
