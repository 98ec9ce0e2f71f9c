#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import Foundation
import GRDB
import SyncProtocol
import TableSync
import TableSyncServer
import TestSupport

/// S1: what one page of a pull costs the server when its table is large. The pull's own keyset request (``PullPlan``:
/// `(updatedAt gt X) or (updatedAt eq X and id gt 'Y')`, `$orderby=updatedAt,id`, `$top=1000`, v3, no gzip) against a
/// table of `largeRows` rows and one of `smallRows`, on SQLite and on PostgreSQL, timed from the request's first
/// byte to the answer's last over one kept-alive loopback connection; the two tables are asked in turn, at the same
/// relative positions, so that drift hits both alike. The tables are filled with SQL inside the database (a
/// recursive `WITH` in SQLite, `generate_series` in PostgreSQL) in the layout docs/server.md gives, while the
/// server runs: it keeps nothing between requests.
struct ServerPagesBenchmark {
    var binaries: String
    var work: String
    var smallRows: Int
    var largeRows: Int
    var pageSize: Int
    var samples: Int
    /// The PostgreSQL database to use too (`nil`: SQLite only).
    var postgresURL: String?

    /// 2025-01-01T00:00:00Z in ticks; row `n` is stamped `n` ms after it, as ``ServerSeeder`` does.
    static let firstTicks = ServerSeeder.firstTicks

    func run() throws -> ResultTable {
        var table = ResultTable(machine: Machine.description(), records: largeRows, runs: samples)
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        var databases:
            [(name: String, url: String, seed: (String, Int) throws -> Void, drop: (String) throws -> Void)] = []
        let sqlitePath = work + "/pages.sqlite"
        databases.append(
            ("SQLite", "sqlite:" + sqlitePath, { try Self.seedSQLite(sqlitePath, table: $0, rows: $1) }, { _ in }))
        if let postgresURL {
            databases.append(
                (
                    "PostgreSQL", postgresURL, { try Self.seedPostgres(postgresURL, table: $0, rows: $1) },
                    {
                        try Self.psql(
                            postgresURL,
                            "DELETE FROM \(RecordColumns.recordsTable) WHERE \(RecordColumns.tableName) = '\($0)'")
                    }
                ))
        }
        for database in databases {
            let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
            let small = "pages_small_\(suffix)"
            let large = "pages_large_\(suffix)"
            progress("S1 \(database.name): starting the server")
            let server = try ServerProcess(
                executable: binaries + "/tablesync-server", database: database.url, tables: [small, large],
                logFile: work + "/pages-server.log")
            defer { server.stopWaiting() }
            progress("S1 \(database.name): filling \(small) with \(smallRows) rows and \(large) with \(largeRows)")
            try database.seed(small, smallRows)
            try database.seed(large, largeRows)
            let times = try pageTimes(
                PageConnection(port: server.port), tables: [(small, smallRows), (large, largeRows)],
                database: database.name)
            let smallTimes = Sample(times[small]!)
            let largeTimes = Sample(times[large]!)
            table.rows.append(
                ResultRow(
                    id: "S1", what: "server: keyset page of \(pageSize) from \(largeRows) rows, \(database.name)",
                    unit: "ms",
                    value: largeTimes, baselineName: "the same page from \(smallRows) rows", baseline: smallTimes,
                    target: "≤ 1.5×", met: largeTimes.median / smallTimes.median <= 1.5))
            try database.drop(small)
            try database.drop(large)
        }
        table.notes.append(
            """
            S1: \(samples) pages per table at positions spread over it (after 3 unmeasured), one loopback connection, \
            no gzip; the test PostgreSQL of scripts/postgres-for-tests.sh runs with fsync=off (reads are what is \
            measured)
            """
        )
        return table
    }

    /// Milliseconds per keyset page, by table: `samples` pages of each of `tables` (name and rows) at positions
    /// spread over it, never within its last page, after 3 unmeasured.
    private func pageTimes(
        _ connection: PageConnection, tables: [(name: String, rows: Int)], database: String
    ) throws -> [String: [Double]] {
        var times: [String: [Double]] = [:]
        for sample in -3..<samples {
            for (name, rows) in tables {
                let position = (max(0, sample) * (rows - pageSize - 1)) / max(1, samples - 1)
                let (seconds, body) = try connection.get(
                    Self.keysetPath(table: name, after: position, pageSize: pageSize))
                let items = try JSONParser.parse(body)["items"]?.arrayValue?.count ?? -1
                guard items == pageSize else {
                    throw BenchError(
                        what: "S1", detail: "\(database) \(name) at \(position): \(items) items, expected \(pageSize)")
                }
                if sample >= 0 { times[name, default: []].append(seconds * 1_000) }
            }
        }
        return times
    }

    /// The request of a keyset page whose cursor is row `position`: the pull's own (``PullPlan``).
    static func keysetPath(table: String, after position: Int, pageSize: Int) -> String {
        let watermark = PullWatermark(
            updatedAt: Timestamp(ticks: firstTicks + Int64(position) * 10_000).text, lastID: rowID(position))
        let query = PullPlan.query(mode: .keyset, baseFilter: nil, watermark: watermark, skip: 0, pageSize: pageSize)
        let encoded = query.map {
            "\($0.name)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0.value)"
        }
        return "/tables/\(table)?" + encoded.joined(separator: "&")
    }

    static func rowID(_ index: Int) -> String { String(format: "r%07d", index) }

    /// A body of about 500 bytes, as a record of the main benchmarks.
    static let filler = String(repeating: "Zürich, \"quoted\" and plain text; ", count: 14)

    private static func seedSQLite(_ path: String, table: String, rows: Int) throws {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.write { db in
            try db.execute(
                sql: """
                    WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
                    INSERT INTO \(RecordColumns.recordsTable) (\(RecordColumns.recordsColumns))
                    SELECT ?, 'r' || substr('0000000' || n, -7, 7), ? + n * 10000, ? + n * 10000, 0,
                           json_object('n', n, 'title', 'record ' || n, 'text', ?)
                    FROM g
                    """, arguments: [rows - 1, table, firstTicks, firstTicks, filler])
            try db.execute(
                sql: """
                    UPDATE \(RecordColumns.clockTable) SET \(RecordColumns.lastUpdatedAt) = ? WHERE \
                    \(RecordColumns.tableName) = ?
                    """,
                arguments: [firstTicks + Int64(rows - 1) * 10_000, table])
        }
    }

    private static func seedPostgres(_ url: String, table: String, rows: Int) throws {
        let text = filler.replacingOccurrences(of: "'", with: "''")
        try psql(
            url,
            """
            INSERT INTO \(RecordColumns.recordsTable) (\(RecordColumns.recordsColumns))
            SELECT '\(table)', 'r' || lpad(n::text, 7, '0'), \(firstTicks) + n * 10000, \(firstTicks) + n * 10000, \
            false,
                   jsonb_build_object('n', n, 'title', 'record ' || n, 'text', '\(text)')
            FROM generate_series(0::bigint, \(rows - 1)) AS n;
            UPDATE \(RecordColumns.clockTable) SET \(RecordColumns.lastUpdatedAt) = \
            \(firstTicks + Int64(rows - 1) * 10_000) WHERE \(RecordColumns.tableName) = '\(table)';
            ANALYZE \(RecordColumns.recordsTable);
            """)
    }

    /// Runs SQL through `psql` (PostgreSQL's client, installed with the server that `make test` uses).
    static func psql(_ url: String, _ sql: String) throws {
        try ChildProcess.run("/usr/bin/env", ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql])
    }

    private func progress(_ message: String) {
        FileHandle.standardError.write(Data("[server pages] \(message)\n".utf8))
    }
}

/// One kept-alive HTTP/1.1 connection to the server on loopback, reading answers by their `Content-Length`:
/// nothing between the clock and the socket but a `write` and the `read`s.
final class PageConnection {
    private let socket: Int32
    private let port: UInt16
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)

    init(port: UInt16) throws {
        self.port = port
        guard let socket = LoopbackSocket.connected(port: Int(port), timeoutSeconds: nil) else {
            throw BenchError(what: "connect", detail: "127.0.0.1:\(port): errno \(errno)")
        }
        self.socket = socket
    }

    deinit { close(socket) }

    /// `GET path` (v3); the seconds from sending to the answer's last byte, and the body.
    func get(_ path: String) throws -> (seconds: Double, body: [UInt8]) {
        try request("GET", path)
    }

    /// `METHOD path` (v3) with `headers` (`Name: value` lines) and a JSON `body`; the seconds from sending to the
    /// answer's last byte, and the answer's body.
    func request(
        _ method: String, _ path: String, headers: [String] = [], body: [UInt8] = []
    ) throws -> (seconds: Double, body: [UInt8]) {
        let answer = try exchange(method, path, headers: headers, body: body)
        return (answer.seconds, answer.body)
    }

    /// As ``request(_:_:headers:body:)``, with the answer's status line and headers as text.
    func exchange(
        _ method: String, _ path: String, headers: [String] = [], body: [UInt8] = []
    ) throws -> (seconds: Double, head: String, body: [UInt8]) {
        var head =
            """
            \(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nZUMO-API-VERSION: 3.0.0\r\nAccept: \
            application/json\r\n
            """
        for header in headers { head += header + "\r\n" }
        if !body.isEmpty { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        let bytes = Array((head + "\r\n").utf8) + body
        let start = Clock.now()
        let sent = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
        guard sent == bytes.count else { throw BenchError(what: "send", detail: "errno \(errno)") }
        var received: [UInt8] = []
        var answerHead = ""
        var headerEnd: Int?
        var contentLength: Int?
        while headerEnd == nil || received.count < headerEnd! + contentLength! {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                throw BenchError(what: "recv", detail: "the server closed the connection (errno \(errno))")
            }
            received.append(contentsOf: buffer[..<count])
            if headerEnd == nil, let end = Self.headerEnd(received) {
                headerEnd = end
                answerHead = String(decoding: received[..<end], as: UTF8.self)
                guard answerHead.hasPrefix("HTTP/1.1 200") else {
                    throw BenchError(what: "\(method) \(path)", detail: answerHead)
                }
                guard
                    let length = Self.header("content-length", in: answerHead).flatMap(Int.init)
                else {
                    throw BenchError(what: "\(method) \(path)", detail: "no Content-Length: \(answerHead)")
                }
                contentLength = length
            }
        }
        let seconds = Clock.now() - start
        return (seconds, answerHead, Array(received[headerEnd!...]))
    }

    /// The value of the header `name` (lowercase) in an answer's `head`, or `nil` when it has none.
    static func header(_ name: String, in head: String) -> String? {
        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name + ":") }
            .map {
                $0.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)[1].trimmingCharacters(
                    in: .whitespaces)
            }
    }

    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index - 3] == 13 && bytes[index - 2] == 10 && bytes[index - 1] == 13 && bytes[index] == 10 {
            return index + 1
        }
        return nil
    }
}

/// `tablesync-bench server-pages`: S1 on SQLite and, given a database, PostgreSQL (`make bench-scale`).
struct ServerPagesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server-pages",
        abstract: "Time a server page of a large table against the same page of a small one, on SQLite and PostgreSQL."
    )

    @Option(help: "Directory holding the release binary tablesync-server.") var bin: String
    @Option(help: "A scratch directory for the SQLite file.") var work: String
    @Option(help: "Where to write the results as JSON.") var output: String
    @Option(help: "Rows of the small table.") var smallRows = 10_000
    @Option(help: "Rows of the large table.") var largeRows = 1_000_000
    @Option(help: "Records per page.") var pageSize = 1_000
    @Option(help: "Pages timed per table.") var samples = 40
    @Option(help: "A postgres:// URL to measure too (its tables are removed afterwards).") var postgres: String?

    func validate() throws {
        guard pageSize >= 1, smallRows > pageSize + 1, largeRows >= smallRows, samples >= 2 else {
            throw ValidationError(
                "--small-rows must exceed --page-size + 1, --large-rows be at least --small-rows, --samples at least 2")
        }
    }

    func run() throws {
        let benchmark = ServerPagesBenchmark(
            binaries: bin, work: work, smallRows: smallRows, largeRows: largeRows,
            pageSize: pageSize, samples: samples, postgresURL: postgres)
        let table = try benchmark.run()
        print(table.text())
        try Data(table.json()).write(to: URL(fileURLWithPath: output))
        print("\nwritten to \(output)")
    }
}
