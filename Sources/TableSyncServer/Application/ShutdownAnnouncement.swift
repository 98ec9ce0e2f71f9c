import Logging
import ServiceLifecycle

/// Logs `stopping` the moment a graceful shutdown (SIGTERM, SIGINT) begins, before the server's requests in flight
/// are given their time; ``runServer(_:configuration:logger:)`` logs `stopped` when everything has ended. The last
/// service of the group, so the first told of the shutdown.
struct ShutdownAnnouncement: Service {
    let logger: Logger

    func run() async {
        do {
            try await gracefulShutdown()
            logger.info("stopping")
        } catch {
            // Cancelled: the group ends for another reason, which it reports itself.
        }
    }
}
