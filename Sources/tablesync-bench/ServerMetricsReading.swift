import TableSyncServer

/// What a `tablesync-server` said about itself at one moment: its `GET /metrics` (Prometheus's text format), read on
/// a connection of its own. The live-sync benchmarks count the requests a watch makes (W2) and the change feed
/// requests waiting (W1, W3) from it.
struct ServerMetricsReading {
    /// The samples, one line each: `name{labels} value` or `name value`.
    private let samples: [(name: Substring, labels: Substring, value: Double)]

    /// Reads the metrics of the server on `port` now.
    init(port: UInt16) throws {
        let (_, body) = try PageConnection(port: port).get(ServerMetrics.path)
        samples = String(decoding: body, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "),
                let value = Double(line[line.index(after: space)...])
            else { return nil }
            let series = line[..<space]
            guard let brace = series.firstIndex(of: "{") else { return (series, "", value) }
            return (series[..<brace], series[brace...], value)
        }
    }

    /// Requests the server has answered, on every route but `/metrics` (this reading's own, and the others').
    var requestsAnswered: Int {
        Int(
            samples.filter {
                $0.name == "tablesync_http_requests_total" && !$0.labels.contains("route=\"\(ServerMetrics.path)\"")
            }
            .reduce(0) { $0 + $1.value })
    }

    /// Change feed requests waiting for a change now.
    var changeFeedWaiting: Int {
        Int(samples.first { $0.name == "tablesync_change_feed_waiting" }?.value ?? 0)
    }

    /// Change feed requests answered 304 after their wait, so far.
    var changeFeedTimeouts: Int {
        Int(
            samples.first { $0.name == "tablesync_change_feed_answers_total" && $0.labels.contains("\"304\"") }?
                .value ?? 0)
    }
}
