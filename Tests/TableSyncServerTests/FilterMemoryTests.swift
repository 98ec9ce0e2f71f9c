import Foundation
import PostgresNIO
import SyncProtocol
@testable import TableSyncServer
import Testing
import TestSupport

/// What a `$filter` that names many properties costs in memory beside one large record: each property is read from a
/// body once per row (``ExtractedProperties``), not once per reference, so the peak stays near the record's size
/// however often the filter names the record's properties, the large one among them. Measured on the
/// `tablesync-server` process (SQLite runs in it) and on the PostgreSQL backends that serve it.
@Suite("Filter memory", .serialized)
struct FilterMemoryTests {
    /// What the read may add to a process's memory: far above what a read of a 15 MB record needs, far below the
    /// gigabytes of a copy per reference. The growth over the process's memory as the read begins is what the read
    /// costs; the peak alone also holds whatever the inserts before it left allocated.
    static let growthLimit = 256 * 1024 * 1024
    static let largeText = String(repeating: "abcdefghijklmnopqrstuvwxyz0123456789", count: 15_000_000 / 36)

    @Test(
        """
        a $filter of 125 comparisons over 32 properties and an 8-key $orderby, beside a 15 MB record, add under \
        256 MB to the server's memory
        """,
        arguments: Backend.available)
    func manyReferencesReadEachBodyOnce(backend: Backend) async throws {
        try await Self.expectPeaksUnderLimit(
            backend, filter: Self.filter(comparisons: 125, properties: 32),
            orderBy: (0..<8).map { "p\($0)" })
    }

    @Test(
        """
        a $filter of 125 comparisons over 32 properties, one of them the 15 MB one, ordered by it too, adds under \
        256 MB to the server's memory; a 150-key $orderby is refused
        """,
        arguments: Backend.available)
    func namingTheLargePropertyCopiesItOnce(backend: Backend) async throws {
        try await Self.expectPeaksUnderLimit(
            backend, filter: Self.filter(comparisons: 125, properties: 32, lastIsLarge: true),
            orderBy: ["text"] + (0..<7).map { "p\($0)" },
            refusedOrderBy: (0..<150).map { "p\($0)" })
    }

    /// Stores the 15 MB record beside 20 small ones, asks for a page with `filter` and `orderBy` (which the large
    /// record matches), and expects the peak RSS of `tablesync-server` and of its PostgreSQL backends to grow by
    /// less than ``growthLimit`` over their RSS as the read begins; `refusedOrderBy`, when given, must be answered
    /// 400 naming its number of keys.
    static func expectPeaksUnderLimit(
        _ backend: Backend, filter: String, orderBy: [String], refusedOrderBy: [String]? = nil
    ) async throws {
        let database = try await sideDatabase(backend, suffix: "_memory")
        defer { TestBackend.removeFiles(of: database) }
        let table = uniqueTableName("memory")
        let directory = TemporaryDirectory()
        let server = try await ServerProcess.start(
            ["--database", Self.url(of: database), "--table", table], logPath: directory.file("server.log"))
        do {
            let port = try #require(Int(server.baseURL.split(separator: ":").last ?? ""))
            var large: [String: JSONValue] = ["id": "large", "text": .string(Self.largeText)]
            for index in 0..<32 { large["p\(index)"] = .integer(Int64(index)) }
            #expect(try await Self.send(port: port, "POST", "/tables/\(table)", body: .object(large)).status == 201)
            for index in 0..<20 {
                let small: JSONValue = ["id": .string("s\(index)"), "p0": .integer(Int64(index))]
                #expect(try await Self.send(port: port, "POST", "/tables/\(table)", body: small).status == 201)
            }
            if let refusedOrderBy {
                let refused = try await Self.send(
                    port: port, "GET", "/tables/\(table)?$orderby=\(refusedOrderBy.joined(separator: ","))")
                #expect(refused.status == 400)
                #expect(refused.text.contains("$orderby names \(refusedOrderBy.count) keys"), "\(refused.text)")
            }
            // The inserts' own peaks are not what is measured. A backend of another user's cluster may refuse the
            // reset; its peak then holds the insert's too, still far below the limit.
            let serverStart = try Self.resetPeak(of: server.processIdentifier)
            var backendStarts: [Int32: Int] = [:]
            for pid in try await Self.serverBackends(database) { backendStarts[pid] = try? Self.resetPeak(of: pid) }

            let answer = try await Self.send(
                port: port, "GET",
                "/tables/\(table)?$filter=\(filter)&$orderby=\(orderBy.joined(separator: ","))&$top=10&$select=id")
            #expect(answer.status == 200, "\(answer.text.prefix(500))")
            #expect(answer.text.contains("\"large\""), "the large record matches: \(answer.text.prefix(500))")

            let serverPeak = try #require(Self.peak(of: server.processIdentifier))
            #expect(
                serverPeak - serverStart < Self.growthLimit,
                "tablesync-server's peak RSS: \(serverPeak / 1_048_576) MiB from \(serverStart / 1_048_576) MiB")
            for pid in try await Self.serverBackends(database) {
                // A backend that ended meanwhile has no peak to read; one that refused the reset counts from zero.
                guard let peak = Self.peak(of: pid) else { continue }
                let start = backendStarts[pid] ?? 0
                #expect(
                    peak - start < Self.growthLimit,
                    "PostgreSQL backend \(pid)'s peak RSS: \(peak / 1_048_576) MiB from \(start / 1_048_576) MiB")
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// `p0 ge 30 or p1 ge 30 …`, `comparisons` of them over `properties` names, as a balanced tree of `or` (a
    /// chain would be deeper than the server allows), percent-encoded; with `lastIsLarge` the last name is the large
    /// property's, compared with a short string. Only the large record has properties of 30 or more.
    static func filter(comparisons: Int, properties: Int, lastIsLarge: Bool = false) -> String {
        func tree(_ range: Range<Int>) -> String {
            if range.count == 1 {
                let index = range.lowerBound % properties
                return lastIsLarge && index == properties - 1 ? "text eq 'none'" : "p\(index) ge 30"
            }
            let middle = range.lowerBound + range.count / 2
            return "(\(tree(range.lowerBound..<middle)) or \(tree(middle..<range.upperBound)))"
        }
        let text = tree(0..<comparisons)
        return text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// `database` as `--database` takes it: on PostgreSQL the test URL with this suite's database in its path.
    static func url(of database: DatabaseLocation) -> String {
        guard case .postgres(let location) = database, let shared = TestBackend.postgresURL,
            var components = URLComponents(string: shared)
        else { return database.urlText }
        components.path = "/" + location.database
        return components.string ?? shared
    }

    /// The answer to one request on a connection of its own.
    static func send(
        port: Int, _ method: String, _ target: String, body: JSONValue? = nil
    ) async throws -> RawHTTPConnection.Answer {
        let connection = try #require(RawHTTPConnection(port: port))
        defer { connection.closeSocket() }
        let bytes = body.map { CanonicalJSON.encode($0, style: .compact) } ?? []
        let length = body == nil ? "" : "Content-Type: application/json\r\nContent-Length: \(bytes.count)\r\n"
        await connection.send(
            "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\n\(length)\r\n")
        await connection.send(bytes)
        return try #require(await connection.readAnswer(within: 120))
    }

    /// Starts the peak RSS of `pid` (`VmHWM`) again from its RSS now (`/proc/PID/clear_refs`), and returns that RSS.
    static func resetPeak(of pid: Int32) throws -> Int {
        try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
        return ProcessMemory.rss(of: pid)
    }

    /// The peak RSS of `pid` in bytes (`VmHWM` of `/proc/PID/status`); `nil` once the process has ended.
    static func peak(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        return Int(line.split(separator: " ").dropFirst().first ?? "").map { $0 * 1024 }
    }

    /// The PostgreSQL backends serving `tablesync-server` processes on `database` (this suite's alone); none on
    /// SQLite.
    static func serverBackends(_ database: DatabaseLocation) async throws -> Set<Int32> {
        guard case .postgres(let location) = database else { return [] }
        return try await withPostgresClient(location) { client in
            var pids: Set<Int32> = []
            let rows = try await client.query(
                """
                SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND \
                application_name = 'tablesync-server'
                """, logger: testLogger)
            for try await row in rows { pids.insert(try row.decode(Int32.self)) }
            return pids
        }
    }
}
