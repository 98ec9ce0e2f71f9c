import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SyncProtocol
import TableSync
@testable import TableSyncServer
import Testing
import TestSupport

/// Pages bounded by bytes as well as by records: a page ends before the record that would take its records past
/// `maxPageBytes` (never before its first), and every way clients page still reaches every record exactly once.
@Suite("Page bytes")
struct PageBytesTests {
    /// The limit the live cases run with: a few of the seeded records a page.
    static let limit = 4096

    /// Sixty records whose texts take 100 to 3,000 bytes, and one of 10,000, larger than ``limit`` alone.
    static let seeded: [(id: String, text: String)] = (0..<60).map { index in
        let length = index == 17 ? 10_000 : [100, 400, 800, 1600, 3000][index % 5]
        return (String(format: "r%03d", index), String(repeating: "x", count: length))
    }

    private static func seed(_ client: any TestClientProtocol, table: String) async throws {
        let operations = seeded.map {
            BatchOperation(kind: .insert, table: table, item: ["id": .string($0.id), "text": .string($0.text)])
        }
        let answer = try await client.send(.post, "/batch", json: BatchRequest(operations: operations).json)
        #expect(answer.status == .ok)
    }

    /// The bytes of `items` as a page sends them: their compact JSON joined by commas.
    private static func itemBytes(_ items: [JSONValue]) -> Int {
        CanonicalJSON.encode(.array(items), style: .compact).count - 2
    }

    /// Checks one page against the limit: within it, or one record alone.
    private static func checkBound(_ items: [JSONValue], page: Int) {
        #expect(
            items.count == 1 || itemBytes(items) <= limit,
            "page \(page): \(items.count) records in \(itemBytes(items)) bytes")
    }

    // MARK: Pure rules

    @Test(
        "where a byte-bounded page ends",
        arguments: [
            // (record bytes, page bytes, records in the page, limit, admitted)
            (5000, 0, 0, 4096, true), // the first record, however large
            (100, 0, 0, 4096, true),
            (100, 3995, 1, 4096, true), // 3995 + comma + 100 = 4096: exactly at the limit
            (101, 3995, 1, 4096, false), // one byte past it
            (1, 4096, 3, 4096, false), // a full page takes nothing more
            (0, 100, 2, 101, true)
        ])
    func pageByteLimit(recordBytes: Int, pageBytes: Int, records: Int, limit: Int, admitted: Bool) {
        #expect(
            PageByteLimit.admits(recordBytes: recordBytes, pageBytes: pageBytes, records: records, limit: limit)
                == admitted)
    }

    @Test(
        "how many rows each FETCH of a PostgreSQL page cursor asks for",
        arguments: [
            // (rows wanted, previous fetch, largest row bytes, rows asked)
            (1001, 0, 0, 1), // the first fetch learns the rows' size
            (0, 0, 0, 0), // $top=0 and its row past the page: nothing, then one
            (1000, 1, 520, 16), // small rows: growing by 16 times
            (984, 16, 520, 256),
            (728, 256, 520, 728), // no more than the page still wants
            (1000, 1, 15_000_000, 1), // rows larger than a fetch's bytes: one at a time
            (1000, 16, 1_048_576, 4), // 4 MiB by the largest row
            (1000, 64, 1, 1000)
        ])
    func cursorFetchSize(rowsWanted: Int, previous: Int, largestRowBytes: Int, asked: Int) {
        #expect(
            CursorFetchSize.next(rowsWanted: rowsWanted, previous: previous, largestRowBytes: largestRowBytes) == asked)
    }

    @Test(
        "which PostgreSQL pages are read in one statement",
        arguments: [
            // ($top and $filter, the table holds large records, one statement)
            ("$top=20", false, true),
            ("$top=100&$filter=done eq false", false, true),
            ("$top=101", false, false), // a bulk read: through the cursor, in turns
            ("$top=20&$filter=startswith(text, 'a')", false, false), // a function: bulk too
            ("$top=20", true, false)
        ])
    func oneStatementPage(query text: String, holdsLargeRecords: Bool, atOnce: Bool) throws {
        let query = try ListQuery.parse(QueryString(text), version: .v2, table: TableOptions(name: "todo"))
        #expect(OneStatementPage.applies(to: query, tableHoldsLargeRecords: holdsLargeRecords) == atOnce)
        // As many such records as a small page asks for move no more than one fetch of the cursor.
        #expect((ReadWeight.smallPage + 1) * OneStatementPage.largestRecord <= CursorFetchSize.bytesPerFetch)
    }

    // Stands for a table that takes its first large record from another server on the same database while clients
    // read it in small pages: the pages stay whole and in order on either route, and from then on that table's small
    // pages are read through the cursor. The server that wrote the record knows it at once.
    @Test(
        "PostgreSQL: small pages in one statement until a large record is read or written, then through the cursor",
        arguments: Backend.postgresIfAvailable)
    func smallPagesChangeRoute(backend: Backend) async throws {
        guard case .postgres(let location) = try backend.database() else { return }
        let table = uniqueTableName()
        let options = TableOptions(name: table)
        try await withPostgresClient(location) { client in
            let writer = try PostgresRecordRepository(client: client, logger: testLogger)
            let reader = try PostgresRecordRepository(client: client, logger: testLogger)
            try await writer.prepare(tables: [options])
            let large = String(repeating: "x", count: OneStatementPage.largestRecord + 1)
            let texts = (0..<30).map { index in index == 12 ? large : "record \(index)" }
            for (index, text) in texts.enumerated() {
                let id = String(format: "r%02d", index)
                let request = RecordWriteRequest(table: table, id: id) { _ in .insert(["text": .string(text)]) }
                _ = try await writer.write([request])
            }
            #expect(writer.largeRecordTables.contains(table), "the server that wrote it")
            func page(_ text: String) async throws -> [String] {
                let query = try ListQuery.parse(QueryString(text), version: .v3, table: options)
                let listed = try await reader.list(in: RecordScope(table: table), query: query, into: RecordList())
                return listed.records.compactMap { $0.properties["text"]?.stringValue }
            }
            // Records before the large one: read in one statement, and the table is not marked.
            #expect(try await page("$top=10&$orderby=id") == Array(texts[0..<10]))
            #expect(!reader.largeRecordTables.contains(table))
            // The page that meets it is whole; from then on the table is read through the cursor, with the same pages.
            #expect(try await page("$top=10&$skip=10&$orderby=id") == Array(texts[10..<20]))
            #expect(reader.largeRecordTables.contains(table))
            #expect(try await page("$top=10&$skip=10&$orderby=id") == Array(texts[10..<20]))
            #expect(try await page("$top=10&$skip=20&$orderby=id") == Array(texts[20..<30]))
            // A bulk read, through the cursor, marks the table as well.
            let bulkReader = try PostgresRecordRepository(client: client, logger: testLogger)
            let bulk = try ListQuery.parse(QueryString("$top=1000&$orderby=id"), version: .v2, table: options)
            let all = try await bulkReader.list(in: RecordScope(table: table), query: bulk, into: RecordList())
            #expect(all.recordCount == texts.count)
            #expect(bulkReader.largeRecordTables.contains(table))
        }
    }

    @Test(
        """
        a page's encoded body is the canonical JSON of the whole answer, and a page ends before the record past its \
        limit
        """
    )
    func encodedPageBody() throws {
        let records = (0..<5).map { index in
            StoredRecord(
                id: "r\(index)", createdAt: 10_000 * Int64(index), updatedAt: 20_000 * Int64(index),
                deleted: index == 3,
                properties: ["text": .string(String(repeating: "é", count: 30 * index)), "n": .integer(Int64(index))])
        }
        var page = EncodedPage(select: ["n"], maxBytes: 1 << 20)
        #expect(records.allSatisfy { page.take($0) })
        let items = JSONValue.array(records.map { $0.json(select: ["n"]) })
        #expect(joined(page.body()) == CanonicalJSON.encode(items, style: .compact))
        let envelope: [String: JSONValue] = ["count": 5, "nextLink": .string("$skip=5")]
        var whole = envelope
        whole["items"] = items
        #expect(
            joined(page.body(member: "items", envelope: envelope))
                == CanonicalJSON.encode(.object(whole), style: .compact))
        #expect(
            joined(page.body(member: "results", envelope: ["count": 5]))
                == CanonicalJSON.encode(["count": 5, "results": items], style: .compact))

        let sizes = records.map { CanonicalJSON.encode($0.json(), style: .compact).count }
        var bounded = EncodedPage(select: nil, maxBytes: sizes[0] + 1 + sizes[1])
        let taken = [bounded.take(records[0]), bounded.take(records[1]), bounded.take(records[2])]
        #expect(taken == [true, true, false])
        #expect(
            joined(bounded.body())
                == CanonicalJSON.encode(.array([records[0].json(), records[1].json()]), style: .compact))
        var alone = EncodedPage(select: nil, maxBytes: 1024)
        let tookFirst = alone.take(records[4])
        #expect(tookFirst, "a first record larger than the limit: \(sizes[4]) bytes")
    }

    private func joined(_ parts: [ByteBuffer]) -> [UInt8] { parts.flatMap { $0.readableBytesView } }

    // MARK: Paging over a live table

    static let cases: [(Backend, ProtocolVersion)] = Backend.available.flatMap { backend in
        ProtocolVersion.allCases.map { (backend, $0) }
    }

    @Test(
        "v3: nextLink after every page that ends early, followed to every record once, or to the $top asked",
        arguments: Backend.available)
    func nextLinkReachesEveryRecord(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], configure: { $0.maxPageBytes = Self.limit })
        { client in
            try await Self.seed(client, table: table)
            #expect(try await Self.follow(client, table: table, from: "$count=true") == Self.seeded.map(\.id))
            let top = try await Self.follow(client, table: table, from: "$top=50&$count=true")
            #expect(top == Self.seeded.prefix(50).map(\.id))
        }
    }

    /// The ids of the records met following `nextLink` from the page `query` asks, each link after the table's path
    /// as Datasync's clients put it.
    private static func follow(
        _ client: any TestClientProtocol, table: String, from query: String
    ) async throws
        -> [String]
    {
        var link: String? = query
        var ids: [String] = []
        var pages = 0
        while let next = link {
            let target = "/tables/\(table)?\(next)"
            let answer = try await client.send(.get, target)
            #expect(answer.status == .ok)
            let body = try answer.json
            let items = body["items"]?.arrayValue ?? []
            #expect(!items.isEmpty, "a link that leads to an empty page: \(target)")
            #expect(body["count"] == .integer(Int64(Self.seeded.count)))
            Self.checkBound(items, page: pages)
            ids += items.compactMap { $0["id"]?.stringValue }
            link = body["nextLink"]?.stringValue
            pages += 1
            if pages > 100 { break }
        }
        // Each page holds at most four of these records: far fewer than $top.
        #expect(pages >= ids.count / 4, "\(pages) pages")
        return ids
    }

    @Test(
        "v2: $skip by the records received reaches every record, and a page that ends early has a Link to the next",
        arguments: Backend.available)
    func skipPagingReachesEveryRecord(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], configure: { $0.maxPageBytes = Self.limit })
        { client in
            try await Self.seed(client, table: table)
            var ids: [String] = []
            var pages = 0
            while pages <= 100 {
                let answer = try await client.send(.get, "/tables/\(table)?$top=50&$skip=\(ids.count)", version: .v2)
                #expect(answer.status == .ok)
                let items = try answer.json.arrayValue ?? []
                if items.isEmpty {
                    #expect(answer["Link"] == nil)
                    break
                }
                Self.checkBound(items, page: pages)
                let more = ids.count + items.count < Self.seeded.count
                let rest = "$skip=\(ids.count + items.count)&$top=\(50 - items.count)"
                #expect(answer["Link"] == (more ? "</tables/\(table)?\(rest)>; rel=next" : nil))
                ids += items.compactMap { $0["id"]?.stringValue }
                pages += 1
            }
            #expect(ids == Self.seeded.map(\.id))
            let counted = try await client.send(.get, "/tables/\(table)?$top=50&$inlinecount=allpages", version: .v2)
                .json
            #expect(counted["count"] == .integer(Int64(Self.seeded.count)))
            #expect((counted["results"]?.arrayValue?.count ?? 0) < 50)
        }
    }

    @Test(
        "TableSync's keyset cursor ($orderby=updatedAt,id and a $filter past the last record) reaches every record",
        arguments: cases)
    func keysetPagingReachesEveryRecord(backend: Backend, version: ProtocolVersion) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], configure: { $0.maxPageBytes = Self.limit })
        { client in
            try await Self.seed(client, table: table)
            var watermark: PullWatermark?
            var ids: [String] = []
            for _ in 0...100 {
                let query = PullPlan.query(mode: .keyset, baseFilter: nil, watermark: watermark, skip: 0, pageSize: 50)
                let text = query.map { "\($0.name)=\(TablePath.percentEncodeQueryComponent($0.value))" }.joined(
                    separator: "&")
                let body = try await client.send(.get, "/tables/\(table)?\(text)", version: version).json
                let items = (version == .v3 ? body["items"]?.arrayValue : body.arrayValue) ?? []
                guard let last = items.last else { break }
                ids += items.compactMap { $0["id"]?.stringValue }
                watermark = PullWatermark(
                    updatedAt: try #require(last["updatedAt"]?.stringValue), lastID: last["id"]?.stringValue)
            }
            #expect(ids.sorted() == Self.seeded.map(\.id))
            #expect(Set(ids).count == ids.count)
        }
    }

    @Test("tablesync pull of pages that end early brings every record, in v2 and v3", arguments: cases)
    func clientPullBringsEveryRecord(backend: Backend, version: ProtocolVersion) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table], configure: { $0.maxPageBytes = Self.limit }) { server in
            let connection = try #require(RawHTTPConnection(port: server.port))
            let body = CanonicalJSON.encode(
                BatchRequest(
                    operations: Self.seeded.map {
                        BatchOperation(
                            kind: .insert, table: table, item: ["id": .string($0.id), "text": .string($0.text)])
                    }
                ).json, style: .compact)
            await connection.send(
                """
                POST /batch HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\nContent-Length: \
                \(body.count)\r\n\r\n
                """
            )
            await connection.send(body)
            #expect(await connection.readAnswer(within: 60)?.status == 200)

            let tablesync = builtProduct("tablesync")
            let directory = TemporaryDirectory()
            let store = directory.file("store")
            let initialized = try await runProgram(
                tablesync,
                [
                    "-C", store, "init", "--remote", server.baseURL, "--table", table,
                    "--api-version", version == .v2 ? "2" : "3"
                ])
            #expect(initialized.status == 0, "\(initialized.stderr)")
            let pulled = try await runProgram(
                tablesync, ["-C", store, "pull", table, "--query-id", "all", "--page-size", "50", "--quiet"])
            #expect(pulled.status == 0, "\(pulled.stderr)")
            let files = try FileManager.default.contentsOfDirectory(atPath: store + "/tables/\(table)").sorted()
            #expect(files == Self.seeded.map { "\($0.id).json" })
        }
    }
}
