import Logging
import Prometheus
import Synchronization
import SyncProtocol

/// Whether the server's database can be reached now, as ``PostgresAvailabilityProbe`` finds it: while it cannot,
/// requests are answered at once with a 503 that says so (``DatabaseAvailabilityMiddleware``) instead of waiting
/// for a connection, and `/health/ready` fails, so that a load balancer sends clients elsewhere.
///
/// The probe checks every half second and whenever a request or the change feed's listener loses its connection
/// (``checkSoon()``); each check's verdict is reported here, and a change is logged once: one line when the database
/// goes away, one when it is back. On SQLite there is no probe, and the database is always up.
actor DatabaseAvailability {
    /// A check's outcome, numbered in the order the checks started.
    struct Verdict: Sendable {
        let check: Int
        let isUp: Bool
    }

    /// Where the server answers whether it can serve now (readiness), as `/health` answers whether it runs
    /// (liveness).
    static let readinessPath = "/health/ready"
    /// The database as the log names it (`postgres://sync@db:5432/sync`, without the password).
    nonisolated let database: String
    /// The database as answers to clients name it, without host or user (`the PostgreSQL database "sync"`).
    nonisolated let publicName: String
    /// Wakes the probe: one element per check wanted (at most one waits).
    nonisolated let checkRequests: AsyncStream<Void>
    private nonisolated let requester: AsyncStream<Void>.Continuation
    private nonisolated let up = Atomic<Bool>(true)
    private nonisolated let armed = Atomic<Bool>(false)
    private let logger: Logger
    /// `tablesync_database_up`: 1 or 0.
    private let gauge: Gauge?
    private var checksStarted = 0
    private var wentAway: ContinuousClock.Instant?
    private var subscribers: [Int: (continuation: AsyncStream<Verdict>.Continuation, firstCheck: Int)] = [:]
    private var nextSubscriber = 0

    /// The availability of `database` (logged as it is) whose answers name it `publicName`.
    init(database: String, publicName: String, logger: Logger, gauge: Gauge?) {
        self.database = database
        self.publicName = publicName
        self.logger = logger
        self.gauge = gauge
        (checkRequests, requester) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        gauge?.set(to: 1)
    }

    /// Whether the database could be reached at the last check.
    nonisolated var isUp: Bool { up.load(ordering: .relaxed) }

    /// Whether the server has started: the probe checks only from then on, the start itself waiting for the
    /// database its own way.
    nonisolated var isArmed: Bool { armed.load(ordering: .relaxed) }

    /// Lets the probe begin; called once the server is ready to serve.
    nonisolated func arm() {
        armed.store(true, ordering: .relaxed)
        requester.yield()
    }

    /// Asks the probe to check now: a connection was lost, or it is time.
    nonisolated func checkSoon() { requester.yield() }

    /// The refusal of every request while the database is away: 503 with `Retry-After` and the code
    /// `databaseUnavailable`.
    nonisolated var refusal: ProtocolError {
        ProtocolError(
            status: .serviceUnavailable, message: "\(publicName) is unavailable; retry later",
            retryAfterSeconds: DatabaseErrorClassifier.retryAfterSeconds, code: .databaseUnavailable)
    }

    /// Called by the probe as a check starts; returns its number.
    func checkStarting() -> Int {
        checksStarted += 1
        return checksStarted
    }

    /// Called by the probe with check `check`'s verdict; a change is logged, counted and told to the subscribers.
    func checked(_ check: Int, isUp: Bool, reason: String? = nil) {
        let was = up.exchange(isUp, ordering: .relaxed)
        if was && !isUp {
            wentAway = .now
            gauge?.set(to: 0)
            logger.warning(
                "the database is unavailable; requests are answered 503 until it is back",
                metadata: ["database": "\(database)", "reason": "\(reason ?? "-")"])
        } else if !was && isUp {
            gauge?.set(to: 1)
            let tenths = ((wentAway.map { ContinuousClock.now - $0 } ?? .zero) / .milliseconds(100)).rounded()
            logger.notice(
                "the database is back",
                metadata: [
                    "database": "\(database)",
                    "secondsAway": "\(tenths / 10)"
                ])
        }
        for subscriber in subscribers.values where check >= subscriber.firstCheck {
            subscriber.continuation.yield(Verdict(check: check, isUp: isUp))
        }
    }

    /// The verdicts of the checks that start from now on (a check already running is left out, as it may have
    /// started before what the caller saw); the stream ends when its reader's task is cancelled.
    func verdictsOfNextChecks() -> AsyncStream<Verdict> {
        let (stream, continuation) = AsyncStream<Verdict>.makeStream()
        let id = nextSubscriber
        nextSubscriber += 1
        subscribers[id] = (continuation, firstCheck: checksStarted + 1)
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        return stream
    }

    private func unsubscribe(_ id: Int) { subscribers[id] = nil }
}
