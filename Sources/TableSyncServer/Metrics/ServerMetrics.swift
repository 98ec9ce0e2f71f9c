import CBuildStamp
import HTTPTypes
import Prometheus
import SyncProtocol

/// What the server measures of itself, served in Prometheus's text format at ``path``: every family with its
/// `# HELP` and `# TYPE`, the labelled series whose labels are known in advance present at zero from the start, the
/// build, and the process's own figures from `/proc` (``ProcessMetrics``).
///
/// Recorded in a registry of this server's own rather than the process-wide one, so that each server (several run in
/// one test process) counts only its own requests.
///
/// | metric | kind | labels |
/// |---|---|---|
/// | `tablesync_http_requests_total` | counter | `route`, `method`, `status` |
/// | `tablesync_http_responses_total` | counter | `class` (`2xx` … `5xx`, present at zero) |
/// | `tablesync_http_request_duration_seconds` | histogram | `route`, `method`, `status` |
/// | `tablesync_http_requests_in_flight` | gauge | |
/// | `tablesync_http_connections_open` | gauge | |
/// | `tablesync_http_connection_refusals_total` | counter | `status` (400, 408, 413, 431, present at zero) |
/// | `tablesync_http_requests_abandoned_total` | counter | |
/// | `tablesync_statement_timeouts_total` | counter | |
/// | `tablesync_pages_ended_early_total` | counter | |
/// | `tablesync_bulk_reads_waiting` | gauge | |
/// | `tablesync_bulk_reads_refused_total` | counter | |
/// | `tablesync_bulk_reads_starved_total` | counter | |
/// | `tablesync_change_feed_waiting` | gauge | |
/// | `tablesync_change_feed_answers_total` | counter | `status` (200, 304, present at zero) |
/// | `tablesync_database_up` | gauge | |
/// | `tablesync_database_connections_in_use`, `tablesync_database_connections_awaited`,
/// `tablesync_database_connections_max` (PostgreSQL) | gauge | |
/// | `tablesync_build_info` | gauge, always 1 | `version`, `commit` |
/// | `process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_virtual_memory_bytes`,
/// `process_open_fds`, `process_start_time_seconds` (Linux) | counter, gauges | |
package final class ServerMetrics: Sendable {
    /// Where the server answers with its metrics.
    package static let path = "/metrics"
    /// The `Content-Type` of the answer: Prometheus's text exposition format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"
    /// The latency buckets: from a page read from cache to one at the default statement time limit.
    static let durationBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
        .seconds(30)
    ]
    /// The statuses the connection guard answers itself (``ConnectionGuardHandler``).
    static let refusalStatuses = [400, 408, 413, 431]
    /// The statuses of change feed answers.
    static let changeFeedStatuses = [200, 304]
    /// The status classes counted from the start.
    static let statusClasses = ["2xx", "3xx", "4xx", "5xx"]

    private let registry = PrometheusCollectorRegistry()

    /// Client connections open now.
    let connectionsOpen: Gauge
    /// Requests being answered now.
    let requestsInFlight: Gauge
    /// Requests whose client went away before their answer was written; they were cancelled.
    let requestsAbandoned: Counter
    /// Database reads ended by the statement time limit (answered 503).
    let statementTimeouts: Counter
    /// Pages that ended before `$top` because their records reached the page byte limit.
    let pagesEndedEarly: Counter
    /// Bulk reads waiting for a turn now (``ReadAdmission``).
    let bulkReadsWaiting: Gauge
    /// Bulk reads refused (503) after waiting as long as they may for a turn.
    let bulkReadsRefused: Counter
    /// Bulk reads on SQLite given up at the idle priority, starved of processors, and read again at the normal one.
    let bulkReadsStarved: Counter
    /// Change feed requests waiting for a change now.
    let changeFeedWaiting: Gauge
    /// 1 while the database can be reached, 0 while it cannot (``DatabaseAvailability``).
    let databaseUp: Gauge
    /// PostgreSQL connections of the pool in use by requests now; `nil` on SQLite.
    let databaseConnectionsInUse: Gauge?
    /// Requests waiting for a PostgreSQL connection of the pool now, all being in use; `nil` on SQLite.
    let databaseConnectionsAwaited: Gauge?

    /// Metrics of a server whose PostgreSQL pool holds at most `databasePoolSize` connections (`nil` on SQLite).
    package init(databasePoolSize: Int? = nil) {
        connectionsOpen = registry.makeGauge(descriptor: Family.connectionsOpen)
        requestsInFlight = registry.makeGauge(descriptor: Family.requestsInFlight)
        requestsAbandoned = registry.makeCounter(descriptor: Family.requestsAbandoned)
        statementTimeouts = registry.makeCounter(descriptor: Family.statementTimeouts)
        pagesEndedEarly = registry.makeCounter(descriptor: Family.pagesEndedEarly)
        bulkReadsWaiting = registry.makeGauge(descriptor: Family.bulkReadsWaiting)
        bulkReadsRefused = registry.makeCounter(descriptor: Family.bulkReadsRefused)
        bulkReadsStarved = registry.makeCounter(descriptor: Family.bulkReadsStarved)
        changeFeedWaiting = registry.makeGauge(descriptor: Family.changeFeedWaiting)
        databaseUp = registry.makeGauge(descriptor: Family.databaseUp)
        databaseUp.set(to: 1)
        if let databasePoolSize {
            databaseConnectionsInUse = registry.makeGauge(descriptor: Family.databaseConnectionsInUse)
            databaseConnectionsAwaited = registry.makeGauge(descriptor: Family.databaseConnectionsAwaited)
            registry.makeGauge(descriptor: Family.databaseConnectionsMax).set(to: Double(databasePoolSize))
        } else {
            databaseConnectionsInUse = nil
            databaseConnectionsAwaited = nil
        }
        for status in Self.refusalStatuses {
            _ = registry.makeCounter(descriptor: Family.connectionRefusals, labels: [("status", String(status))])
        }
        for status in Self.changeFeedStatuses {
            _ = registry.makeCounter(descriptor: Family.changeFeedAnswers, labels: [("status", String(status))])
        }
        for statusClass in Self.statusClasses {
            _ = registry.makeCounter(descriptor: Family.responses, labels: [("class", statusClass)])
        }
        let version = String(cString: tablesync_build_version())
        let commit = String(cString: tablesync_build_commit())
        registry.makeGauge(
            descriptor: Family.buildInfo,
            labels: [
                ("version", version.isEmpty ? TableSyncVersion.current : version),
                ("commit", commit.isEmpty ? "unknown" : commit)
            ]
        ).set(to: 1)
    }

    /// Counts a request answered on `route` (its pattern, such as `/tables/{table}`) and how long it took.
    func requestAnswered(route: String, method: HTTPRequest.Method, status: HTTPResponse.Status, duration: Duration) {
        let labels = [("route", route), ("method", method.rawValue), ("status", String(status.code))]
        registry.makeCounter(descriptor: Family.requests, labels: labels).increment()
        registry.makeDurationHistogram(
            descriptor: Family.requestDuration, labels: labels, buckets: Self.durationBuckets
        )
        .record(duration)
        registry.makeCounter(descriptor: Family.responses, labels: [("class", "\(status.code / 100)xx")]).increment()
    }

    /// Counts a change feed answer: 200 with new marks, or 304 when nothing changed.
    func changeFeedAnswered(status: HTTPResponse.Status) {
        registry.makeCounter(descriptor: Family.changeFeedAnswers, labels: [("status", String(status.code))])
            .increment()
    }

    /// Counts an answer the connection guard gave itself (a timeout, a body too large, bytes that are not HTTP).
    func connectionRefused(status: Int) {
        registry.makeCounter(descriptor: Family.connectionRefusals, labels: [("status", String(status))]).increment()
    }

    /// Every metric in Prometheus's text exposition format, the process's own read at this moment.
    func exposition() -> [UInt8] {
        registry.emitToBuffer() + (ProcessMetrics.current()?.exposition() ?? [])
    }

    /// Each family's name and help text, declared once (computed: the descriptor type is not `Sendable`).
    enum Family {
        static var requests: MetricNameDescriptor {
            family("tablesync_http_requests_total", "HTTP requests answered, by route pattern, method and status.")
        }
        static var responses: MetricNameDescriptor {
            family(
                "tablesync_http_responses_total", "HTTP requests answered, by status class; every class from the start."
            )
        }
        static var requestDuration: MetricNameDescriptor {
            family(
                "tablesync_http_request_duration_seconds",
                "Time from a request's head to its answer, by route pattern, method and status.")
        }
        static var requestsInFlight: MetricNameDescriptor {
            family("tablesync_http_requests_in_flight", "Requests being answered now.")
        }
        static var connectionsOpen: MetricNameDescriptor {
            family("tablesync_http_connections_open", "Client connections open now.")
        }
        static var connectionRefusals: MetricNameDescriptor {
            family(
                "tablesync_http_connection_refusals_total",
                "Answers the connection guard gave itself: 408 too slow, 413 too large, 400 not HTTP, 431 headers.")
        }
        static var requestsAbandoned: MetricNameDescriptor {
            family("tablesync_http_requests_abandoned_total", "Requests whose client went away before the answer.")
        }
        static var statementTimeouts: MetricNameDescriptor {
            family("tablesync_statement_timeouts_total", "Reads ended by the statement time limit, answered 503.")
        }
        static var pagesEndedEarly: MetricNameDescriptor {
            family("tablesync_pages_ended_early_total", "Pages ended before $top at the page byte limit.")
        }
        static var bulkReadsWaiting: MetricNameDescriptor {
            family("tablesync_bulk_reads_waiting", "Bulk reads waiting for a turn now.")
        }
        static var bulkReadsRefused: MetricNameDescriptor {
            family("tablesync_bulk_reads_refused_total", "Bulk reads answered 503 after waiting for a turn.")
        }
        static var bulkReadsStarved: MetricNameDescriptor {
            family(
                "tablesync_bulk_reads_starved_total",
                "SQLite bulk reads starved at the idle priority and read again at the normal one.")
        }
        static var changeFeedWaiting: MetricNameDescriptor {
            family("tablesync_change_feed_waiting", "Change feed requests waiting for a change now.")
        }
        static var changeFeedAnswers: MetricNameDescriptor {
            family("tablesync_change_feed_answers_total", "Change feed answers: 200 new marks, 304 nothing changed.")
        }
        static var databaseUp: MetricNameDescriptor {
            family("tablesync_database_up", "1 while the server's database can be reached, 0 while it is unavailable.")
        }
        static var databaseConnectionsInUse: MetricNameDescriptor {
            family("tablesync_database_connections_in_use", "PostgreSQL pool connections leased to requests now.")
        }
        static var databaseConnectionsAwaited: MetricNameDescriptor {
            family("tablesync_database_connections_awaited", "Requests waiting for a PostgreSQL pool connection now.")
        }
        static var databaseConnectionsMax: MetricNameDescriptor {
            family("tablesync_database_connections_max", "The most connections the PostgreSQL pool opens.")
        }
        static var buildInfo: MetricNameDescriptor {
            family("tablesync_build_info", "Always 1: the version and commit of this tablesync-server.")
        }

        private static func family(_ name: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
        }
    }
}
