import Foundation
import SyncProtocol
import Testing
import TestSupport

/// PostgreSQL stopped under a running `tablesync-server` process (`pg_ctl stop -m fast`, as an administrator or a
/// failover does) and started again: readiness fails at once, requests are answered 503 naming the database instead
/// of waiting, a client's sync stops saying so and keeps its changes, and everything answers again soon after the
/// database is back, with one log line each way. The cluster is the test's own, on its own port.
@Suite("Database outage")
struct DatabaseOutageTests {
    /// The cluster's port (25441–25443 are the tests' own clusters').
    static let port = 25441

    @Test("PostgreSQL stops and comes back: readiness, 503s naming the database, the client's exit, the recovery")
    func outageAndRecovery() async throws {
        guard let cluster = try await PostgresCluster.start(port: Self.port) else {
            Issue.record("PostgreSQL's binaries are not installed (scripts/install-deps.sh installs them)")
            return
        }
        let directory = TemporaryDirectory()
        do {
            let server = try await ServerProcess.start(
                ["--database", cluster.url, "--table", "todo"], logPath: directory.file("server.log"))
            do {
                try await outage(cluster: cluster, server: server, directory: directory)
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        } catch {
            await cluster.remove()
            throw error
        }
        await cluster.remove()
    }

    private func outage(cluster: PostgresCluster, server: ServerProcess, directory: TemporaryDirectory) async throws {
        let port = try #require(Int(server.baseURL.split(separator: ":").last ?? ""))
        let tablesync = builtProduct("tablesync")
        let store = directory.file("store")
        #expect(try await Self.get(port, "/health/ready")?.status == 200)
        #expect(
            try await runProgram(tablesync, ["-C", store, "init", "--remote", server.baseURL, "--table", "todo"])
                .status == 0)
        #expect(try await runProgram(tablesync, ["-C", store, "insert", "todo", #"{"id": "a"}"#]).status == 0)

        try await cluster.stop()
        let stopped = ContinuousClock.now
        let notReady = try await Self.waitForStatus(503, port: port, path: "/health/ready", within: .seconds(2))
        #expect(notReady != nil, "readiness still passes 2 s after the database stopped:\n\(server.log)")
        let request = ContinuousClock.now
        let refused = try #require(try await Self.get(port, "/tables/todo"))
        // Answered at once, not after waiting on the database; 3 s, as a full run's load once took 1.5 s here.
        #expect(ContinuousClock.now - request < .seconds(3))
        #expect(refused.status == 503)
        #expect(refused.header("retry-after") == "1")
        let body = try JSONParser.parse(refused.body)
        #expect(ProtocolErrorBody.code(in: body) == .databaseUnavailable, "\(refused.text)")
        #expect(ProtocolErrorBody.message(in: body)?.contains("PostgreSQL database \"postgres\"") == true)
        #expect(try await Self.get(port, "/health")?.status == 200, "liveness is not the database's")
        let sync = try await runProgram(tablesync, ["-C", store, "sync"])
        #expect(sync.status == 4, "\(sync.stderr)")
        #expect(sync.stderr.contains("answered, but its database is unavailable"), "\(sync.stderr)")
        let status = try await runProgram(tablesync, ["-C", store, "status", "--json"])
        #expect(try JSONParser.parse(status.stdout)["pending"]?.arrayValue?.count == 1, "the insert is kept")
        let down = ContinuousClock.now - stopped

        try await cluster.start()
        let ready = try await Self.waitForStatus(200, port: port, path: "/health/ready", within: .seconds(5))
        #expect(ready != nil, "readiness fails 5 s after the database came back:\n\(server.log)")
        #expect(try await Self.get(port, "/tables/todo")?.status == 200)
        let again = try await runProgram(tablesync, ["-C", store, "sync"])
        #expect(again.status == 0, "\(again.stderr)")
        let log = server.log
        let lines = log.split(separator: "\n")
        #expect(lines.filter { $0.contains("the database is unavailable") }.count == 1, "\(log)")
        #expect(lines.filter { $0.contains("the database is back") }.count == 1, "\(log)")
        #expect(!log.contains("lost its PostgreSQL listener"), "the availability speaks for the listener: \(log)")
        #expect(!lines.contains { $0.contains(" error ") || $0.contains(" critical ") }, "\(log)")
        print(
            """
            database outage: not ready \(notReady.map { "\($0)" } ?? "-") after the stop; the client's sync ended \
            \(down) after it; ready \(ready.map { "\($0)" } ?? "-") after the start
            """)
    }

    /// How long after now `path` first answers `status`, asking every 20 ms; `nil` when it did not `within`.
    private static func waitForStatus(
        _ status: Int, port: Int, path: String, within limit: Duration
    ) async throws -> Duration? {
        let started = ContinuousClock.now
        while ContinuousClock.now - started < limit {
            if try await get(port, path)?.status == status { return ContinuousClock.now - started }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    private static func get(_ port: Int, _ path: String) async throws -> RawHTTPConnection.Answer? {
        let connection = try #require(RawHTTPConnection(port: port))
        await connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\n\r\n")
        return await connection.readAnswer(within: 10)
    }
}
