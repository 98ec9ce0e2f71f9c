import CoreMetrics
import HTTPTypes
import Metrics
import Prometheus

/// What the server measures of itself, served in Prometheus's text format at ``path``.
///
/// Recorded through swift-metrics with a factory of this server's own rather than the process-wide one, so that
/// each server (several run in one test process) counts only its own requests.
///
/// | metric | kind | labels |
/// |---|---|---|
/// | `tablesync_http_requests_total` | counter | `route`, `method`, `status` |
/// | `tablesync_http_request_duration_seconds` | histogram | `route`, `method`, `status` |
/// | `tablesync_http_requests_in_flight` | gauge | |
/// | `tablesync_http_connections_open` | gauge | |
/// | `tablesync_http_connection_refusals_total` | counter | `status` |
/// | `tablesync_http_requests_abandoned_total` | counter | |
/// | `tablesync_statement_timeouts_total` | counter | |
/// | `tablesync_pages_ended_early_total` | counter | |
/// | `tablesync_bulk_reads_waiting` | gauge | |
/// | `tablesync_bulk_reads_refused_total` | counter | |
/// | `tablesync_bulk_reads_starved_total` | counter | |
/// | `tablesync_change_feed_waiting` | gauge | |
/// | `tablesync_change_feed_answers_total` | counter | `status` (200, 304) |
/// | `tablesync_database_up` | gauge | |
/// | `tablesync_database_connections_in_use`, `tablesync_database_connections_awaited`,
/// `tablesync_database_connections_max` (PostgreSQL) | gauge | |
public final class ServerMetrics: Sendable {
    /// Where the server answers with its metrics.
    public static let path = "/metrics"
    /// The `Content-Type` of the answer: Prometheus's text exposition format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"
    /// The latency buckets: from a page read from cache to one at the default statement time limit.
    static let durationBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
        .seconds(30)
    ]

    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory

    /// Client connections open now.
    let connectionsOpen: CoreMetrics.Meter
    /// Requests being answered now.
    let requestsInFlight: CoreMetrics.Meter
    /// Requests whose client went away before their answer was written; they were cancelled.
    let requestsAbandoned: CoreMetrics.Counter
    /// Database reads ended by the statement time limit (answered 503).
    let statementTimeouts: CoreMetrics.Counter
    /// Pages that ended before `$top` because their records reached the page byte limit.
    let pagesEndedEarly: CoreMetrics.Counter
    /// Bulk reads waiting for a turn now (``ReadAdmission``).
    let bulkReadsWaiting: CoreMetrics.Meter
    /// Bulk reads refused (503) after waiting as long as they may for a turn.
    let bulkReadsRefused: CoreMetrics.Counter
    /// Bulk reads on SQLite given up at the idle priority, starved of processors, and read again at the normal one.
    let bulkReadsStarved: CoreMetrics.Counter
    /// Change feed requests waiting for a change now.
    let changeFeedWaiting: CoreMetrics.Meter
    /// 1 while the database can be reached, 0 while it cannot (``DatabaseAvailability``).
    let databaseUp: CoreMetrics.Gauge
    /// PostgreSQL connections of the pool in use by requests now; `nil` on SQLite.
    let databaseConnectionsInUse: CoreMetrics.Meter?
    /// Requests waiting for a PostgreSQL connection of the pool now, all being in use; `nil` on SQLite.
    let databaseConnectionsAwaited: CoreMetrics.Meter?

    /// Metrics of a server whose PostgreSQL pool holds at most `databasePoolSize` connections (`nil` on SQLite).
    public init(databasePoolSize: Int? = nil) {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.durationBuckets
        self.factory = factory
        connectionsOpen = CoreMetrics.Meter(label: "tablesync_http_connections_open", factory: factory)
        requestsInFlight = CoreMetrics.Meter(label: "tablesync_http_requests_in_flight", factory: factory)
        requestsAbandoned = CoreMetrics.Counter(label: "tablesync_http_requests_abandoned_total", factory: factory)
        statementTimeouts = CoreMetrics.Counter(label: "tablesync_statement_timeouts_total", factory: factory)
        pagesEndedEarly = CoreMetrics.Counter(label: "tablesync_pages_ended_early_total", factory: factory)
        bulkReadsWaiting = CoreMetrics.Meter(label: "tablesync_bulk_reads_waiting", factory: factory)
        bulkReadsRefused = CoreMetrics.Counter(label: "tablesync_bulk_reads_refused_total", factory: factory)
        bulkReadsStarved = CoreMetrics.Counter(label: "tablesync_bulk_reads_starved_total", factory: factory)
        changeFeedWaiting = CoreMetrics.Meter(label: "tablesync_change_feed_waiting", factory: factory)
        databaseUp = CoreMetrics.Gauge(label: "tablesync_database_up", factory: factory)
        databaseUp.record(1)
        if let databasePoolSize {
            databaseConnectionsInUse = CoreMetrics.Meter(
                label: "tablesync_database_connections_in_use", factory: factory)
            databaseConnectionsAwaited = CoreMetrics.Meter(
                label: "tablesync_database_connections_awaited", factory: factory)
            CoreMetrics.Gauge(label: "tablesync_database_connections_max", factory: factory).record(databasePoolSize)
        } else {
            databaseConnectionsInUse = nil
            databaseConnectionsAwaited = nil
        }
    }

    /// Counts a request answered on `route` (its pattern, such as `/tables/{table}`) and how long it took.
    func requestAnswered(route: String, method: HTTPRequest.Method, status: HTTPResponse.Status, duration: Duration) {
        let dimensions = [("route", route), ("method", method.rawValue), ("status", String(status.code))]
        CoreMetrics.Counter(label: "tablesync_http_requests_total", dimensions: dimensions, factory: factory)
            .increment()
        CoreMetrics.Timer(label: "tablesync_http_request_duration_seconds", dimensions: dimensions, factory: factory)
            .record(duration: duration)
    }

    /// Counts a change feed answer: 200 with new marks, or 304 when nothing changed.
    func changeFeedAnswered(status: HTTPResponse.Status) {
        CoreMetrics.Counter(
            label: "tablesync_change_feed_answers_total", dimensions: [("status", String(status.code))],
            factory: factory
        ).increment()
    }

    /// Counts an answer the connection guard gave itself (a timeout, a body too large, bytes that are not HTTP).
    func connectionRefused(status: Int) {
        CoreMetrics.Counter(
            label: "tablesync_http_connection_refusals_total", dimensions: [("status", String(status))],
            factory: factory
        ).increment()
    }

    /// Every metric in Prometheus's text exposition format.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}
