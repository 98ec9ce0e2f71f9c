import Foundation
import PostgresNIO
import SyncProtocol
@testable import TableSyncServer
import Testing
import TestSupport

/// A request whose client goes away before its answer is cancelled, and its database statement with it: a slow page
/// read on a live `tablesync-server` process, abandoned by its client over a raw socket, stops using the database at
/// once instead of running to its end (or to the statement time limit); so does one in flight when the server stops.
@Suite("Abandoned requests")
struct AbandonedRequestTests {
    /// A filter within the cost limits (growth 16) that matches nothing, so that a page read evaluates it on every
    /// record: `chains` times four nested `replace` calls, enough to make the read take several seconds on each
    /// database.
    static func filter(chains: Int) -> String {
        (0..<chains).map {
            "length(replace(replace(replace(replace(text,'a','bb'),'b','cc'),'c','dd'),'d','ee')) eq \($0)"
        }
        .joined(separator: " or ")
    }

    /// How soon after its client left a read must have stopped: SQLite's statement is interrupted and PostgreSQL's
    /// cancelled at once, and a loaded machine may take a while to show it (SQLite's activity is judged over half a
    /// second). A quarter of the whole read, and never less than two seconds: a read that ran to its end, or to the
    /// statement time limit, cannot pass for one that stopped.
    static func stopWithin(whole: Duration) -> Duration {
        max(.seconds(2), whole / 4)
    }

    /// How long the whole read must take: twice the shortest ``stopWithin(whole:)``.
    static let longEnough = Duration.seconds(4)

    @Test(
        """
        a page read abandoned by its client, or in flight when the server stops, frees the database long before it \
        would have ended
        """,
        arguments: Backend.available)
    func abandonedReadStops(backend: Backend) async throws {
        let database = try await sideDatabase(backend, suffix: "_abandoned")
        defer { TestBackend.removeFiles(of: database) }
        let table = uniqueTableName()
        let directory = TemporaryDirectory()
        let server = try await ServerProcess.start(
            [
                "--database", "\(database)", "--table", table, "--statement-timeout", "300",
                "--shutdown-timeout", "1"
            ],
            logPath: directory.file("server.log"))
        do {
            try await check(
                server: server, table: table,
                activity: DatabaseActivity(database: database, serverProcess: server.processIdentifier))
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    private func check(server: ServerProcess, table: String, activity: DatabaseActivity) async throws {
        let port = try #require(Int(server.baseURL.split(separator: ":").last ?? ""))
        try await Self.seed(port: port, table: table)
        // The read left alone: how long it takes to its end. SQLite evaluates the filter about three times as fast as
        // PostgreSQL; a quiet machine reads faster than a busy one, so the filter grows until the read takes long
        // enough to tell a stop from its end.
        var chains = activity.database.isSQLite ? 3 : 1
        var request = ""
        var natural = Duration.zero
        repeat {
            if natural > .zero { chains *= 2 }
            let filter = Self.filter(chains: chains)
            request =
                "GET /tables/\(table)?$filter=\(TablePath.percentEncodeQueryComponent(filter)) HTTP/1.1\r\n"
                + "Host: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\n\r\n"
            let whole = try #require(RawHTTPConnection(port: port))
            let started = ContinuousClock.now
            await whole.send(request)
            #expect(await whole.readAnswer(within: 300)?.status == 200)
            natural = ContinuousClock.now - started
        } while natural < Self.longEnough && chains < 16
        let stopWithin = Self.stopWithin(whole: natural)
        #expect(natural >= Self.longEnough, "the read must take long enough to tell a stop from its end: \(natural)")

        // The same read, abandoned while it runs.
        let abandoned = try #require(RawHTTPConnection(port: port))
        await abandoned.send(request)
        try #require(
            try await activity.waitUntil(busy: true, within: natural) != nil, "the read runs before its client leaves")
        abandoned.closeSocket()
        let stoppedAfter = try #require(
            try await activity.waitUntil(busy: false, within: natural),
            "the abandoned read ran on for as long as the whole read (\(natural))")
        #expect(
            stoppedAfter < stopWithin, "stopped \(stoppedAfter) after its client left; the whole read takes \(natural)")

        // The server goes on serving.
        let next = try #require(RawHTTPConnection(port: port))
        await next.send("GET /tables/\(table)?$top=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\n\r\n")
        #expect(await next.readAnswer(within: 30)?.status == 200)

        // The abandoned read is counted as such, not as a statement past the time limit.
        let scrape = try #require(RawHTTPConnection(port: port))
        await scrape.send("GET \(ServerMetrics.path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let samples = MetricsTests.samples(try #require(await scrape.readAnswer(within: 30)).text)
        #expect(MetricsTests.value(samples, "tablesync_http_requests_abandoned_total") == 1)
        #expect(MetricsTests.value(samples, "tablesync_statement_timeouts_total") == 0)

        // A read in flight when the server stops ends with it, in the database too.
        let interrupted = try #require(RawHTTPConnection(port: port))
        await interrupted.send(request)
        try #require(
            try await activity.waitUntil(busy: true, within: natural) != nil, "the read runs before the server stops")
        await server.stop()
        let idleAfter = try await activity.waitUntil(busy: false, within: natural)
        #expect(
            idleAfter.map { $0 < stopWithin } == true,
            "the read ran on after the server stopped: idle after \(String(describing: idleAfter))")
    }

    /// 1,500 records of 20,000 characters, in batches under the body limit.
    private static func seed(port: Int, table: String) async throws {
        let text = String(repeating: "abcd", count: 5000)
        for batch in 0..<5 {
            let operations = (0..<300).map { index in
                BatchOperation(
                    kind: .insert, table: table, item: ["id": .string("r\(batch)-\(index)"), "text": .string(text)])
            }
            let body = CanonicalJSON.encode(BatchRequest(operations: operations).json, style: .compact)
            let connection = try #require(RawHTTPConnection(port: port))
            await connection.send(
                """
                POST /batch HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\nContent-Length: \
                \(body.count)\r\n\r\n
                """
            )
            await connection.send(body)
            #expect(await connection.readAnswer(within: 120)?.status == 200)
        }
    }
}

/// Whether a database is working for the server right now, as each database shows it: PostgreSQL lists the
/// server's statements that are running in `pg_stat_activity` (of a database this test alone uses), and SQLite
/// runs inside the server's process, which then spends processor time.
private struct DatabaseActivity: Sendable {
    let database: DatabaseLocation
    let serverProcess: Int32

    /// Watches the database until a statement of the server runs (`busy`) or none does (`!busy`), for at most
    /// `limit`: how long that took, or `nil`. PostgreSQL is asked every 50 ms over one connection; SQLite counts as
    /// busy while the server spends more than a twentieth of each 500 ms on a processor (an idle server spends next
    /// to nothing; a running read, even on a machine whose other work leaves it a small share of a processor, far
    /// more).
    func waitUntil(busy: Bool, within limit: Duration) async throws -> Duration? {
        let started = ContinuousClock.now
        switch database {
        case .sqlite:
            while ContinuousClock.now - started < limit {
                let before = ProcessorUse.processorTime(of: serverProcess)
                try await Task.sleep(for: .milliseconds(500))
                if (ProcessorUse.processorTime(of: serverProcess) - before > 0.025) == busy {
                    return ContinuousClock.now - started
                }
            }
            return nil
        case .postgres(let location):
            return try await withPostgresClient(location) { client in
                while ContinuousClock.now - started < limit {
                    let rows = try await client.query(
                        """
                        SELECT count(*) FROM pg_stat_activity
                        WHERE datname = \(location.database) AND application_name = 'tablesync-server'
                          AND state = 'active' AND pid <> pg_backend_pid()
                        """, logger: testLogger
                    ).collect()
                    if try ((rows.first?.decode(Int64.self) ?? 0) > 0) == busy {
                        return ContinuousClock.now - started
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                return nil
            }
        }
    }
}

extension DatabaseLocation {
    var isSQLite: Bool {
        if case .sqlite = self { return true }
        return false
    }
}
