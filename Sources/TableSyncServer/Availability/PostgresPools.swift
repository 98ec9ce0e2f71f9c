import Logging
import PostgresNIO
import ServiceLifecycle

/// The PostgreSQL connection pool that requests lease from, replaced by a fresh one when the database goes away and
/// again when it is back (``PostgresAvailabilityProbe``).
///
/// A pool that met a database that was gone goes on failing for a while after it returns (PostgresNIO backs off its
/// connection attempts and trips a circuit breaker), and requests waiting in it wait until it gives up; a fresh pool
/// connects at once, and shutting the old one down answers the requests waiting in it at once. Runs as a service of
/// the server application, until its graceful shutdown.
actor PostgresPools: Service {
    /// What each fresh pool is made of; `nil` for a pool its owner runs, which is never replaced.
    private let configuration: PostgresClient.Configuration?
    private let logger: Logger
    /// The pool requests lease from now.
    private(set) var current: PostgresClient
    /// The runs of the pools made here, the current one's last.
    private var runs: [Task<Void, Never>] = []

    /// Pools of `configuration`, made and run here; `logger` receives their background messages.
    init(configuration: PostgresClient.Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        current = PostgresClient(configuration: configuration, backgroundLogger: logger)
    }

    /// `client` alone, which its owner runs; ``replace()`` leaves it in place.
    init(running client: PostgresClient, logger: Logger) {
        configuration = nil
        self.logger = logger
        current = client
    }

    /// Runs the current pool, and those that replace it, until the graceful shutdown; then shuts them all down.
    func run() async {
        if configuration != nil, runs.isEmpty { start(current) }
        try? await gracefulShutdown()
        for run in runs { run.cancel() }
        for run in runs { await run.value }
    }

    /// Puts a fresh pool in place of the current one, which shuts down: the requests waiting in it fail at once.
    func replace() {
        guard let configuration else { return }
        let fresh = PostgresClient(configuration: configuration, backgroundLogger: logger)
        runs.last?.cancel()
        current = fresh
        start(fresh)
    }

    private func start(_ client: PostgresClient) {
        runs.append(Task { await client.run() })
    }
}
