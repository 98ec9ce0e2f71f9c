import Foundation
import HTTPTypes
import HummingbirdTesting
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// Clients that keep milliseconds must see every row.
///
/// Stands for the Azure JS client 2.0.1 and the iOS SDK (the seed's client) pulling from tablesync-server: they
/// parse `updatedAt` into a millisecond date, round a finer value up, and page with `updatedAt ge W` plus `$skip`
/// over the rows sharing `W`. With 100-ns stamps, 6,000 writes in one batch left such a reader with 60 of 1,050
/// rows. The server must emit every `updatedAt` as an exact millisecond, under bursts of thousands of writes per
/// millisecond, while staying strictly increasing per table.
@Suite("updatedAt at millisecond precision")
struct MillisecondReaderTests {
    static let writers = 2
    static let batchesPerWriter = 2
    static let batchSize = 1000

    @Test(
        "bursts of 1,000 writes per batch: a millisecond reader and a keyset reader see every row",
        arguments: Backend.available)
    func millisecondReaderSeesEveryRow(backend: Backend) async throws {
        let table = uniqueTableName("ms")
        try await withServer(backend, tables: [TableOptions(name: table)]) { client in
            let done = ManagedFlag()
            async let writing: Void = withThrowingTaskGroup(of: Void.self) { group in
                defer { done.set() }
                for writer in 0..<Self.writers {
                    group.addTask {
                        for batch in 0..<Self.batchesPerWriter {
                            let operations = (0..<Self.batchSize).map { index in
                                BatchOperation(
                                    kind: .insert, table: table, item: ["id": .string("w\(writer)-b\(batch)-\(index)")])
                            }
                            let reply = try await client.send(
                                .post, TablePath.batch, json: BatchRequest(operations: operations).json)
                            #expect(reply.status == .ok)
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Reads while the bursts commit, then once more after the last one.
            var reader = MillisecondPullReader()
            while true {
                let stopping = done.value
                try await reader.readToEnd(client, table: table)
                if stopping { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            try await writing
            let keyset = try await KeysetReader.readAll(client, table: table)

            let total = Self.writers * Self.batchesPerWriter * Self.batchSize
            #expect(keyset.stamps.count == total)
            #expect(reader.seen.count == total, "the millisecond reader missed \(total - reader.seen.count) rows")
            let badlyWritten = keyset.stamps.filter { !Self.isExactMillisecond($0) }
            #expect(badlyWritten.isEmpty, "updatedAt not written as .fffZ: \(badlyWritten.prefix(3))")
            let ticks = keyset.stamps.compactMap { Timestamp(parsing: $0)?.ticks }
            #expect(ticks == ticks.sorted() && Set(ticks).count == ticks.count, "updatedAt is not strictly increasing")
        }
    }

    @Test("the clock rule: whole milliseconds, one millisecond past the last stamp, even a finer one")
    func clockRule() {
        let ms = UpdatedAtClock.ticksPerMillisecond
        #expect(UpdatedAtClock.next(nowTicks: 1_000 * ms + 4_321, last: 0) == 1_000 * ms)
        #expect(UpdatedAtClock.next(nowTicks: 1_000 * ms + 4_321, last: 1_000 * ms) == 1_001 * ms)
        #expect(UpdatedAtClock.next(nowTicks: 1_000 * ms, last: 1_005 * ms) == 1_006 * ms)
        // A stamp left by an older server, 100 ns past a millisecond.
        #expect(UpdatedAtClock.next(nowTicks: 1_000 * ms, last: 1_000 * ms + 1) == 1_001 * ms)
        #expect(UpdatedAtClock.next(nowTicks: -3, last: -10 * ms - 1) == -ms)
    }

    static func isExactMillisecond(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 24, bytes[19] == UInt8(ascii: "."), bytes[23] == UInt8(ascii: "Z") else { return false }
        return bytes[20..<23].allSatisfy { $0 >= 48 && $0 <= 57 }
    }
}

/// The Azure SDKs' pull as a client with millisecond dates runs it: `updatedAt ge W`, `$orderby=updatedAt`, `$skip`
/// over the rows of the page that share `W`, where `W` is the last row's `updatedAt` rounded up to a millisecond.
struct MillisecondPullReader {
    private(set) var seen: Set<String> = []
    private var watermark: Int64?
    private var skip = 0
    static let pageSize = 100

    /// Pages until the server has nothing past the watermark.
    mutating func readToEnd(_ client: any TestClientProtocol, table: String) async throws {
        while true {
            var query = "$orderby=updatedAt&$top=\(Self.pageSize)&__includeDeleted=true"
            if let watermark {
                query +=
                    "&$filter=" + Self.formEncode("updatedAt ge datetimeoffset'\(Timestamp(ticks: watermark).text)'")
            }
            if skip > 0 { query += "&$skip=\(skip)" }
            let reply = try await client.send(.get, "\(TablePath.table(table))?\(query)")
            guard reply.status == .ok, let items = try reply.json["items"]?.arrayValue else {
                throw ReaderError(reason: "HTTP \(reply.status.code): \(reply.errorMessage ?? "")")
            }
            if items.isEmpty { return }
            let rounded = items.map { Self.roundedUp($0) }
            for item in items { if let id = item["id"]?.stringValue { seen.insert(id) } }
            let lastRounded = rounded.last!
            if lastRounded == watermark {
                skip += items.count
            } else {
                watermark = lastRounded
                skip = rounded.filter { $0 == lastRounded }.count
            }
        }
    }

    /// The item's `updatedAt` as a millisecond date, rounded up as the clients do.
    static func roundedUp(_ item: JSONValue) -> Int64? {
        guard let ticks = item["updatedAt"]?.stringValue.flatMap(Timestamp.init(parsing:))?.ticks else { return nil }
        let ms = UpdatedAtClock.ticksPerMillisecond
        let remainder = ((ticks % ms) + ms) % ms
        return remainder == 0 ? ticks : ticks - remainder + ms
    }

    static func formEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}

/// Pages by `(updatedAt, id)` as TableSync's client does, returning every `updatedAt` in order.
enum KeysetReader {
    static func readAll(
        _ client: any TestClientProtocol, table: String
    ) async throws -> (ids: [String], stamps: [String]) {
        var ids: [String] = []
        var stamps: [String] = []
        while true {
            var query = "$orderby=updatedAt,id&$top=1000&__includeDeleted=true"
            if let stamp = stamps.last, let id = ids.last {
                let at = "datetimeoffset'\(stamp)'"
                query +=
                    "&$filter="
                    + MillisecondPullReader.formEncode("updatedAt gt \(at) or (updatedAt eq \(at) and id gt '\(id)')")
            }
            let reply = try await client.send(.get, "\(TablePath.table(table))?\(query)")
            guard reply.status == .ok, let items = try reply.json["items"]?.arrayValue else {
                throw ReaderError(reason: "HTTP \(reply.status.code): \(reply.errorMessage ?? "")")
            }
            if items.isEmpty { return (ids, stamps) }
            for item in items {
                ids.append(item["id"]?.stringValue ?? "")
                stamps.append(item["updatedAt"]?.stringValue ?? "")
            }
        }
    }
}

struct ReaderError: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
