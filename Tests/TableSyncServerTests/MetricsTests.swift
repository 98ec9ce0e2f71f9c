import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import Synchronization
import SyncProtocol
@testable import TableSyncServer
import Testing
import TestSupport

/// Operating the server: `/metrics` in Prometheus's text format, scraped from a live server after real requests, and
/// the request id that ties an answer to the server's log lines.
@Suite("Metrics and request ids")
struct MetricsTests {
    /// One sample of a scrape: a metric's name, its labels and its value.
    struct Sample: Equatable {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    /// The samples of Prometheus's text exposition format (comment lines skipped).
    static func samples(_ text: String) -> [Sample] {
        text.split(separator: "\n").compactMap { line -> Sample? in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "),
                let value = Double(line[line.index(after: space)...])
            else {
                return nil
            }
            let series = line[..<space]
            guard let brace = series.firstIndex(of: "{") else {
                return Sample(name: String(series), labels: [:], value: value)
            }
            var labels: [String: String] = [:]
            for pair in series[series.index(after: brace)..<series.index(before: series.endIndex)].split(separator: ",")
            {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
            }
            return Sample(name: String(series[..<brace]), labels: labels, value: value)
        }
    }

    /// The value of the sample of `name` whose labels include `labels`; `nil` when the scrape has none.
    static func value(_ samples: [Sample], _ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { sample in sample.name == name && labels.allSatisfy { key, value in sample.labels[key] == value }
        }?.value
    }

    /// The samples of the live server at `port`, scraped on a connection of their own.
    static func scrape(port: Int) async throws -> [Sample] {
        let connection = try #require(RawHTTPConnection(port: port))
        await connection.send(
            "GET \(ServerMetrics.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\n\r\n")
        return samples(try #require(await connection.readAnswer(within: 30)).text)
    }

    /// Scrapes the server at `port` every 50 ms until the value of `name` satisfies `holds`: how a test waits for
    /// the server to reach a state (a read holding a connection, a request waiting). Records an issue saying
    /// `what` after 10 s.
    static func waitUntil(
        port: Int, _ name: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ holds: (Double?) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !holds(value(try await scrape(port: port), name)) {
            guard ContinuousClock.now < deadline else {
                Issue.record("waited 10 s for \(what) (\(name))", sourceLocation: sourceLocation)
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    private static func get(
        _ port: Int, _ target: String, headers: String = ""
    ) async throws -> RawHTTPConnection.Answer {
        let connection = try #require(RawHTTPConnection(port: port))
        await connection.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\n\(headers)\r\n")
        return try #require(await connection.readAnswer(within: 60))
    }

    @Test(
        """
        a scrape after real requests counts them by route and status, with durations, pages, timeouts, refusals and \
        the pool
        """,
        arguments: Backend.available)
    func scrapeAfterRequests(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table], configure: { $0.maxPageBytes = 1024 }) { server in
            let port = server.port
            // Three records of 600 bytes: pages of 1,024 bytes hold one each.
            for index in 0..<3 {
                let body = "{\"id\":\"r\(index)\",\"text\":\"\(String(repeating: "x", count: 600))\"}"
                let connection = try #require(RawHTTPConnection(port: port))
                await connection.send(
                    """
                    POST /tables/\(table) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\nContent-Length: \
                    \(body.utf8.count)\r\n\r\n\(body)
                    """
                )
                #expect(await connection.readAnswer(within: 30)?.status == 201)
            }
            for _ in 0..<2 { #expect(try await Self.get(port, "/tables/\(table)?$top=10").status == 200) }
            #expect(try await Self.get(port, "/tables/\(table)/missing").status == 404)
            #expect(try await Self.get(port, "/nothing-here").status == 404)
            let garbage = try #require(RawHTTPConnection(port: port))
            await garbage.send("NOT HTTP AT ALL\r\n\r\n")
            #expect(await garbage.readAnswer(within: 30)?.status == 400)

            let scrape = try await Self.get(port, ServerMetrics.path)
            #expect(scrape.status == 200)
            #expect(scrape.header("content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
            let samples = Self.samples(scrape.text)
            let requests = "tablesync_http_requests_total"
            #expect(
                Self.value(samples, requests, ["route": "/tables/{table}", "method": "POST", "status": "201"]) == 3,
                "\(scrape.text)")
            #expect(Self.value(samples, requests, ["route": "/tables/{table}", "method": "GET", "status": "200"]) == 2)
            #expect(
                Self.value(samples, requests, ["route": "/tables/{table}/{id}", "method": "GET", "status": "404"]) == 1)
            #expect(Self.value(samples, requests, ["route": "NotFound", "method": "GET", "status": "404"]) == 1)
            #expect(
                Self.value(
                    samples, "tablesync_http_request_duration_seconds_count",
                    ["route": "/tables/{table}", "method": "POST", "status": "201"]) == 3)
            #expect(
                Self.value(
                    samples, "tablesync_http_request_duration_seconds_bucket",
                    ["route": "/tables/{table}", "method": "GET", "status": "200", "le": "+Inf"]) == 2)
            // Each list request ended its page after one of the three records.
            #expect(Self.value(samples, "tablesync_pages_ended_early_total") == 2)
            #expect(Self.value(samples, "tablesync_http_connection_refusals_total", ["status": "400"]) == 1)
            // The scrape's own connection is open, and its request is in flight.
            #expect((Self.value(samples, "tablesync_http_connections_open") ?? 0) >= 1)
            #expect(Self.value(samples, "tablesync_http_requests_in_flight") == 1)
            #expect(Self.value(samples, "tablesync_statement_timeouts_total") == 0)
            #expect(Self.value(samples, "tablesync_http_requests_abandoned_total") == 0)
            switch backend {
            case .postgres:
                #expect(
                    Self.value(samples, "tablesync_database_connections_max")
                        == Double(ServerConfiguration.defaultPostgresPoolSize))
                #expect(Self.value(samples, "tablesync_database_connections_in_use") == 0)
                #expect(Self.value(samples, "tablesync_database_connections_awaited") == 0)
            case .sqlite:
                #expect(Self.value(samples, "tablesync_database_connections_max") == nil)
            }
        }
    }

    @Test(
        "a read past the statement time limit is counted and logged with the request's id", arguments: Backend.available
    )
    func statementTimeoutCountedAndLogged(backend: Backend) async throws {
        let table = uniqueTableName()
        let lines = CapturedLogLines()
        var logger = Logger(label: "tablesync-server-tests") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .debug
        let database = try backend.database()
        defer { TestBackend.removeFiles(of: database) }
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, database: database, tables: [TableOptions(name: table)])
        configuration.statementTimeout = .milliseconds(20)
        let app = try makeServerApplication(configuration: configuration, logger: logger)
        try await app.test(.router) { client in
            let text = String(repeating: "abcd", count: 5000)
            let operations = (0..<300).map {
                BatchOperation(kind: .insert, table: table, item: ["id": .string("r\($0)"), "text": .string(text)])
            }
            #expect(
                try await client.send(.post, "/batch", json: BatchRequest(operations: operations).json).status == .ok)
            let filter = "length(replace(replace(replace(replace(text,'a','bb'),'b','cc'),'c','dd'),'d','ee')) gt 0"
            let answer = try await client.send(
                .get, "/tables/\(table)?$filter=" + TablePath.percentEncodeQueryComponent(filter),
                headers: [.requestID: "trace-me.42"])
            #expect(answer.status == .serviceUnavailable)
            #expect(answer["X-Request-ID"] == "trace-me.42")
            let samples = Self.samples(
                String(decoding: try await client.send(.get, ServerMetrics.path, version: nil).bytes, as: UTF8.self))
            #expect(Self.value(samples, "tablesync_statement_timeouts_total") == 1)
            #expect(
                Self.value(samples, "tablesync_http_requests_total", ["route": "/tables/{table}", "status": "503"]) == 1
            )
        }
        let warnings = lines.all.filter { $0.message.contains("statement time limit") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.requestID == "trace-me.42", "\(warnings)")
        #expect(lines.all.contains { $0.message == "answered" && $0.requestID == "trace-me.42" })
    }

    @Test("every answer carries an X-Request-ID: the client's when it is a sane token, the server's own otherwise")
    func requestIDs() async throws {
        let table = uniqueTableName()
        try await withServer(.sqlite, tables: [TableOptions(name: table)]) { client in
            let given = try await client.send(
                .get, "/tables/\(table)", headers: [.requestID: "3f2c9a1e-0b7d-4c1e-9a55-2f1e0c3d4b6a"])
            #expect(given["X-Request-ID"] == "3f2c9a1e-0b7d-4c1e-9a55-2f1e0c3d4b6a")
            var seen: Set<String> = []
            for sent in ["bad id with spaces", "", String(repeating: "a", count: 129), "x\u{7f}"] {
                let answer = try await client.send(.get, "/tables/\(table)", headers: [.requestID: sent])
                let id = try #require(answer["X-Request-ID"])
                #expect(id != sent && RequestIdentifier.accepts(id), "\(sent) → \(id)")
                seen.insert(id)
            }
            let refused = try await client.send(
                .get, "/tables/\(table)", version: nil, headers: [HTTPField.Name(ProtocolHeader.apiVersion)!: "1.0.0"])
            #expect(refused.status == .badRequest)
            #expect(refused["X-Request-ID"].map(RequestIdentifier.accepts) == true)
            #expect(seen.count == 4, "each request gets an id of its own")
        }
    }

    @Test(
        "which client request ids are taken",
        arguments: [
            ("3f2c9a1e-0b7d-4c1e-9a55-2f1e0c3d4b6a", true),
            ("trace:span.1_2", true),
            (String(repeating: "a", count: 128), true),
            (String(repeating: "a", count: 129), false),
            ("", false),
            ("has space", false),
            ("quote\"", false),
            ("newline\n", false),
            ("é", false)
        ])
    func requestIDRule(value: String, accepted: Bool) {
        #expect(RequestIdentifier.accepts(value) == accepted)
    }

    @Test("/metrics needs a token exactly when the server has tokens")
    func metricsFollowTheTokens() async throws {
        let table = uniqueTableName()
        try await withServer(.sqlite, tables: [TableOptions(name: table)], tokens: ["secret"]) { client in
            #expect(try await client.send(.get, ServerMetrics.path, version: nil).status == .unauthorized)
            let answer = try await client.send(
                .get, ServerMetrics.path, version: nil, headers: [.authorization: "Bearer secret"])
            #expect(answer.status == .ok)
            #expect(String(decoding: answer.bytes, as: UTF8.self).contains("tablesync_http_requests_total"))
            #expect(
                try await client.send(
                    .post, ServerMetrics.path, version: nil, headers: [.authorization: "Bearer secret"]
                ).status
                    == .methodNotAllowed)
        }
        try await withServer(.sqlite, tables: [TableOptions(name: table)]) { client in
            let open = try await client.send(.get, ServerMetrics.path, version: nil)
            #expect(open.status == .ok)
        }
    }

    /// `promtool`, Prometheus's own checker of the text format (Debian package `prometheus`), when installed.
    static let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// The names of the families a scrape declares with `# HELP` and with `# TYPE`, and those its samples belong to
    /// (a histogram's `_bucket`, `_sum` and `_count` to the histogram).
    static func families(_ text: String) -> (help: Set<String>, type: Set<String>, sampled: Set<String>) {
        var help: Set<String> = []
        var types: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if line.hasPrefix("# HELP "), words.count > 3 { help.insert(String(words[2])) }
            if line.hasPrefix("# TYPE "), words.count == 4 { types[String(words[2])] = String(words[3]) }
        }
        let sampled = Set(
            samples(text).map { sample in
                for suffix in ["_bucket", "_sum", "_count"] where sample.name.hasSuffix(suffix) {
                    let base = String(sample.name.dropLast(suffix.count))
                    if types[base] == "histogram" { return base }
                }
                return sample.name
            })
        return (help, Set(types.keys), sampled)
    }

    @Test(
        """
        every family has # HELP and # TYPE; the process, the build and the database are there; labelled series of \
        known labels are there at zero from the start
        """,
        arguments: Backend.available)
    func exposition(backend: Backend) async throws {
        try await withLiveServer(backend, tables: [uniqueTableName()]) { server in
            let scrape = try await Self.get(server.port, ServerMetrics.path)
            let text = scrape.text
            let (help, type, sampled) = Self.families(text)
            #expect(sampled.isSubset(of: help), "without # HELP: \(sampled.subtracting(help))")
            #expect(sampled.isSubset(of: type), "without # TYPE: \(sampled.subtracting(type))")
            let samples = Self.samples(text)
            for statusClass in ["2xx", "3xx", "4xx", "5xx"] {
                #expect(Self.value(samples, "tablesync_http_responses_total", ["class": statusClass]) == 0, "\(text)")
            }
            for status in ["400", "408", "413", "431"] {
                #expect(Self.value(samples, "tablesync_http_connection_refusals_total", ["status": status]) == 0)
            }
            for status in ["200", "304"] {
                #expect(Self.value(samples, "tablesync_change_feed_answers_total", ["status": status]) == 0)
            }
            #expect(Self.value(samples, "tablesync_database_up") == 1)
            #expect(
                Self.value(samples, "tablesync_build_info", ["version": TableSyncVersion.current, "commit": "unknown"])
                    == 1, "an unstamped build: \(text)")
            let now = Date().timeIntervalSince1970
            let started = try #require(Self.value(samples, "process_start_time_seconds"))
            #expect(started > now - 86_400 && started <= now + 1, "the process started within the day: \(started)")
            #expect((Self.value(samples, "process_resident_memory_bytes") ?? 0) > Double(1 << 20))
            #expect((Self.value(samples, "process_open_fds") ?? 0) >= 3)
            #expect((Self.value(samples, "process_cpu_seconds_total") ?? -1) >= 0)

            let again = Self.samples(try await Self.get(server.port, ServerMetrics.path).text)
            #expect(Self.value(again, "tablesync_http_responses_total", ["class": "2xx"]) == 1, "the first scrape")
        }
    }

    @Test(
        "promtool check metrics finds nothing to say of a scrape after requests",
        .enabled(if: promtool != nil, "promtool is missing: scripts/install-deps.sh installs the prometheus package"),
        arguments: Backend.available)
    func promtoolAgrees(backend: Backend) async throws {
        let promtool = try #require(Self.promtool)
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table]) { server in
            #expect(try await Self.get(server.port, "/tables/\(table)").status == 200)
            #expect(try await Self.get(server.port, "/tables/\(table)/missing").status == 404)
            let directory = TemporaryDirectory()
            try directory.write("scrape.txt", try await Self.get(server.port, ServerMetrics.path).text)
            let check = try await runProgram(promtool, ["check", "metrics"], input: directory.file("scrape.txt"))
            #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
            #expect(check.stdout.isEmpty && check.stderr.isEmpty, "\(check.stdout)\(check.stderr)")
        }
    }

    @Test("the process's figures are read from /proc/self/stat as Linux writes it, its command name spaces and all")
    func processStat() throws {
        let stat =
            "4242 (tablesync server) S 1 4242 4242 0 -1 4194560 5000 0 0 0 250 50 0 0 20 0 9 0 1000 "
            + "589127680 13700 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0"
        let metrics = try #require(
            ProcessMetrics.parse(
                stat: stat, systemStat: "cpu  1 2 3\nbtime 1795920000\nprocesses 9\n", openFileDescriptors: 12,
                ticksPerSecond: 100, pageSize: 4096))
        #expect(
            metrics
                == ProcessMetrics(
                    cpuSeconds: 3, residentBytes: 13700 * 4096, virtualBytes: 589_127_680, openFileDescriptors: 12,
                    startTimeSeconds: 1_795_920_010))
        #expect(
            ProcessMetrics.parse(
                stat: "garbage", systemStat: "", openFileDescriptors: 0, ticksPerSecond: 100,
                pageSize: 4096) == nil)
        let text = String(decoding: metrics.exposition(), as: UTF8.self)
        #expect(text.contains("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 3.0\n"))
    }
}

/// The log lines a server wrote, for tests that check what its log says. A log handler of the test's own: swift-log
/// sends lines to whatever handler the program chose, and the server's is the test's.
final class CapturedLogLines: Sendable {
    struct Line: Sendable {
        let message: String
        let requestID: String?
    }

    private let lines = Mutex<[Line]>([])

    func append(_ line: Line) { lines.withLock { $0.append(line) } }

    var all: [Line] { lines.withLock { $0 } }
}

/// Hands every line to a ``CapturedLogLines``.
struct CapturingLogHandler: LogHandler {
    let lines: CapturedLogLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        lines.append(
            .init(message: event.message.description, requestID: merged[RequestIdentifier.logMetadataKey]?.description))
    }
}
