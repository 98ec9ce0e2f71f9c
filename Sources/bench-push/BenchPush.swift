import Foundation
import Hummingbird
import Logging
import SyncProtocol
import TableSync
import TableSyncServer

/// `bench-push`: pushes the same number of updates one request per operation and in batches (gzip at each
/// level asked for, and uncompressed) to one local `tablesync-server`, and prints wall time, requests and body
/// bytes on the wire side by side.
///
/// ```
/// swift build -c release --product bench-push
/// .build/release/bench-push [--operations 10000] [--database sqlite:PATH|postgres://USER@HOST/DB] [--levels 1,6,9]
/// ```
@main
struct BenchPush {
    struct Options {
        var operations = 10_000
        var database: String?
        var levels: [Int32] = [1, 6]

        init(arguments: [String]) throws {
            var iterator = arguments.makeIterator()
            while let argument = iterator.next() {
                guard let value = iterator.next() else { throw BenchError("\(argument) needs a value") }
                switch argument {
                case "--operations":
                    guard let count = Int(value), count > 0 else { throw BenchError("--operations must be a positive number") }
                    operations = count
                case "--database": database = value
                case "--levels":
                    levels = try value.split(separator: ",").map {
                        guard let level = Int32($0), (1...9).contains(level) else { throw BenchError("--levels takes zlib levels 1…9, like 1,6") }
                        return level
                    }
                default: throw BenchError("unknown argument \(argument); use --operations N, --database URL, --levels L,L")
                }
            }
        }
    }

    struct BenchError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// One measured push.
    struct Row {
        let mode: String
        let seconds: Double
        let report: PushReport
    }

    static func main() async {
        do {
            try await run(try Options(arguments: Array(CommandLine.arguments.dropFirst())))
        } catch {
            FileHandle.standardError.write(Data("bench-push: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(_ options: Options) async throws {
        let work = NSTemporaryDirectory() + "tablesync-bench-push-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let table = "bench_" + UUID().uuidString.prefix(8).lowercased()
        let database = try DatabaseLocation.parse(options.database ?? "sqlite:\(work)/server.sqlite")
        var logger = Logger(label: "bench-push-server")
        logger.logLevel = .warning
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = try makeServerApplication(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0, database: database, tables: [TableOptions(name: table)]),
            logger: logger) { channel in continuation.yield(channel.localAddress?.port ?? 0) }
        let server = Task { try await app.runService(gracefulShutdownSignals: []) }
        defer { server.cancel() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else { throw BenchError("the server did not start") }

        let store = try SyncContext.initialize(directory: work + "/store",
                                               settings: StoreSettings(remote: "http://127.0.0.1:\(port)", tables: [table]))
        let ids = (0..<options.operations).map { String(format: "rec%06d", $0) }
        try writeRecords(store, table: table, ids: ids, round: 0)
        try await store.recordHandEdits()
        try await store.push(options: SyncOptions())

        var modes: [(String, SyncOptions)] = [("one request per operation", SyncOptions(batch: false))]
        for level in options.levels { modes.append(("batched, gzip level \(level)", SyncOptions(compressionLevel: level))) }
        modes.append(("batched, uncompressed", SyncOptions(compressionLevel: nil)))
        var rows: [Row] = []
        for (round, (mode, syncOptions)) in modes.enumerated() {
            try writeRecords(store, table: table, ids: ids, round: round + 1)
            try await store.recordHandEdits()
            let pending = await store.pendingOperations.count
            guard pending == ids.count else { throw BenchError("expected \(ids.count) pending updates, found \(pending)") }
            let start = DispatchTime.now().uptimeNanoseconds
            let report = try await store.push(options: syncOptions)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            guard report.applied == ids.count else { throw BenchError("\(mode): applied \(report.applied) of \(ids.count)") }
            rows.append(Row(mode: mode, seconds: seconds, report: report))
        }
        print(render(rows, operations: options.operations, database: database))
    }

    /// Writes every record file with content that differs each round (an update per record).
    static func writeRecords(_ store: SyncContext, table: String, ids: [String], round: Int) throws {
        for id in ids {
            let path = store.layout.recordFile(table: table, id: id)
            var record: [String: JSONValue] = ["id": .string(id), "title": .string("Task \(id) in round \(round)"),
                                               "complete": .bool(round % 2 == 1), "priority": .integer(Int64(round)),
                                               "notes": "Bring the blue folder and the signed form to the front desk."]
            if round > 0, let existing = try? JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).objectValue {
                for name in [SystemProperty.version, SystemProperty.createdAt, SystemProperty.updatedAt, SystemProperty.deleted] {
                    record[name] = existing[name]
                }
            }
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(CanonicalJSON.encode(.object(record))).write(to: URL(fileURLWithPath: path))
        }
    }

    static func render(_ rows: [Row], operations: Int, database: DatabaseLocation) -> String {
        let backend: String
        switch database {
        case .sqlite: backend = "SQLite"
        case .postgres: backend = "PostgreSQL"
        }
        var lines = ["push of \(operations) updates to a local tablesync-server on \(backend)", "",
                     "| mode | wall s | ops/s | requests | bytes sent | bytes received | speed-up |",
                     "|---|---:|---:|---:|---:|---:|---:|"]
        let baseline = rows.first?.seconds ?? 1
        for row in rows {
            let traffic = row.report.traffic
            lines.append("| \(row.mode) | " + String(format: "%.2f | %.0f", row.seconds, Double(operations) / row.seconds)
                + " | \(traffic.requests) | \(traffic.bytesSent) | \(traffic.bytesReceived) | "
                + String(format: "%.1f×", baseline / row.seconds) + " |")
        }
        return lines.joined(separator: "\n")
    }
}
