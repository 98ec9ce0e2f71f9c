import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The PostgreSQL connection pool that requests lease from, replaced by a fresh one when the database goes away and
/// again when it is back (``PostgresAvailabilityProbe``).
///
/// A pool that met a database that was gone goes on failing for a while after it returns (PostgresNIO backs off its
/// connection attempts and trips a circuit breaker), and requests waiting in it wait until it gives up; a fresh pool
/// connects at once, and shutting the old one down answers the requests waiting in it at once. Runs as a service of
/// the server application, until its graceful shutdown; a pool is handed out only once its run has begun
/// (PostgresNIO warns of a lease before it).
actor PostgresPools: Service {
    /// What each fresh pool is made of; `nil` for a pool its owner runs, which is never replaced.
    private let configuration: PostgresClient.Configuration?
    private let logger: Logger
    /// The pool requests lease from now.
    private var client: PostgresClient
    /// The runs of the pools made here, the current one's last.
    private var runs: [Task<Void, Never>] = []
    /// Whether ``client`` runs; until it does, leases wait in ``waiting``.
    private var isRunning: Bool
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private nonisolated let answers = Atomic<Int>(0)

    /// How many statements of requests the database has answered so far: the availability probe's evidence that a
    /// database slow to answer its own check is busy, not away.
    nonisolated var answersSoFar: Int { answers.load(ordering: .relaxed) }

    /// Counts one answer of the database to a request's statement, a result or an error of its own (SQLSTATE).
    nonisolated func noteAnswer() { answers.add(1, ordering: .relaxed) }

    /// Pools of `configuration`, made and run here; `logger` receives their background messages.
    init(configuration: PostgresClient.Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        isRunning = false
    }

    /// `client` alone, which its owner runs; ``replace()`` leaves it in place.
    init(running client: PostgresClient, logger: Logger) {
        configuration = nil
        self.logger = logger
        self.client = client
        isRunning = true
    }

    /// The pool to lease from, once it runs.
    func current() async -> PostgresClient {
        if !isRunning { await withCheckedContinuation { waiting.append($0) } }
        return client
    }

    /// Runs the current pool, and those that replace it, until the graceful shutdown; then shuts them all down.
    func run() async {
        if configuration != nil, runs.isEmpty { await begin(client) }
        isRunning = true
        for lease in waiting { lease.resume() }
        waiting = []
        try? await gracefulShutdown()
        for run in runs { run.cancel() }
        for run in runs { await run.value }
    }

    /// Puts a fresh pool in place of the current one, which shuts down: the requests waiting in it fail at once.
    func replace() async {
        guard let configuration else { return }
        let previous = runs.last
        let fresh = PostgresClient(configuration: configuration, backgroundLogger: logger)
        await begin(fresh)
        previous?.cancel()
        client = fresh
    }

    /// Starts `pool`'s run and returns once it has begun.
    private func begin(_ pool: PostgresClient) async {
        let (begun, signal) = AsyncStream<Void>.makeStream()
        runs.append(
            Task {
                signal.finish()
                await pool.run()
            })
        for await _ in begun {}
    }
}
