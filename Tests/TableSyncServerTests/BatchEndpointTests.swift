import GzipCompression
import HTTPTypes
import HummingbirdTesting
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// `POST /batch`: each operation answered exactly as its single request, limits, discovery, switching it off.
@Suite("Batch endpoint")
struct BatchEndpointTests {
    static let cases: [(Backend, ProtocolVersion)] = Backend.available.flatMap { backend in
        ProtocolVersion.allCases.map { (backend, $0) }
    }

    /// Records a, b, c live and d soft-deleted, in `table`; returns their versions.
    private static func seed(
        _ client: any TestClientProtocol, table: String, version: ProtocolVersion
    ) async throws -> [String: String] {
        var versions: [String: String] = [:]
        for id in ["a", "b", "c", "d"] {
            let created = try await client.send(
                .post, "/tables/\(table)", version: version, json: ["id": .string(id), "text": .string(id), "n": 1])
            versions[id] = try created.json["version"]?.stringValue
        }
        _ = try await client.send(.delete, "/tables/\(table)/d", version: version)
        return versions
    }

    /// Operations covering every answer: created, duplicate, updated, stale, deleted, missing, malformed, and
    /// one that is stale only because an earlier operation of the same batch changed its record.
    private static func operations(table: String, versions: [String: String]) -> [BatchOperation] {
        [
            BatchOperation(kind: .insert, table: table, item: ["id": "new", "text": "fresh"]),
            BatchOperation(kind: .insert, table: table, item: ["id": "a", "text": "duplicate"]),
            BatchOperation(
                kind: .replace, table: table, id: "b", version: versions["b"], item: ["id": "b", "text": "replaced"]),
            BatchOperation(kind: .replace, table: table, id: "c", version: "AAAAAAAAAAE=", item: ["text": "stale"]),
            BatchOperation(kind: .merge, table: table, id: "a", version: versions["a"], item: ["text": "merged"]),
            BatchOperation(
                kind: .merge, table: table, id: "a", item: ["version": "AAAAAAAAAAE=", "text": "v2 body version"]),
            BatchOperation(kind: .delete, table: table, id: "c", version: versions["c"]),
            BatchOperation(kind: .delete, table: table, id: "d"),
            BatchOperation(kind: .replace, table: table, id: "d", item: ["text": "on a deleted record"]),
            BatchOperation(kind: .replace, table: table, id: "missing", item: ["text": "x"]),
            BatchOperation(kind: .insert, table: table, item: ["id": "a/b"]),
            BatchOperation(kind: .replace, table: table, id: "b", item: ["id": "other", "text": "x"]),
            BatchOperation(kind: .insert, table: table, item: ["createdAt": 5]),
            BatchOperation(kind: .delete, table: table, id: "b", version: versions["b"]),
            BatchOperation(kind: .delete, table: table, id: "b?")
        ]
    }

    /// The single request an operation stands for.
    private static func single(
        _ client: any TestClientProtocol, _ operation: BatchOperation, version: ProtocolVersion
    ) async throws -> Reply {
        var headers: HTTPFields = [:]
        if let recordVersion = operation.version { headers[.ifMatch] = "\"\(recordVersion)\"" }
        let path = TablePath.table(operation.table)
        let recordPath = operation.id.map { TablePath.record(table: operation.table, id: $0) } ?? path
        switch operation.kind {
        case .insert:
            return try await client.send(.post, path, version: version, json: operation.item, headers: headers)
        case .replace:
            return try await client.send(.put, recordPath, version: version, json: operation.item, headers: headers)
        case .merge:
            return try await client.send(.patch, recordPath, version: version, json: operation.item, headers: headers)
        case .delete: return try await client.send(.delete, recordPath, version: version, headers: headers)
        }
    }

    /// A body with the server-assigned stamps (which differ between two runs) taken out.
    private static func withoutStamps(_ body: JSONValue?) -> JSONValue? {
        guard case .object(var members)? = body else { return body }
        for name in [SystemProperty.createdAt, SystemProperty.updatedAt, SystemProperty.version] { members[name] = nil }
        return .object(members)
    }

    @Test("each operation gets the status and body its single request gets, and leaves the same rows", arguments: cases)
    func sameAsSingleRequests(backend: Backend, version: ProtocolVersion) async throws {
        let singleTable = uniqueTableName()
        let batchTable = uniqueTableName()
        let minimalTable = uniqueTableName()
        try await withServer(backend, tables: [singleTable, batchTable, minimalTable].map { TableOptions(name: $0) }) {
            client in
            let singleVersions = try await Self.seed(client, table: singleTable, version: version)
            var expected: [BatchResult] = []
            for operation in Self.operations(table: singleTable, versions: singleVersions) {
                let reply = try await Self.single(client, operation, version: version)
                expected.append(
                    BatchResult(
                        status: Int(reply.status.code), body: try reply.bytes.isEmpty ? JSONValue?.none : reply.json))
            }
            let batchVersions = try await Self.seed(client, table: batchTable, version: version)
            let request = BatchRequest(operations: Self.operations(table: batchTable, versions: batchVersions))
            let reply = try await client.send(.post, TablePath.batch, version: version, json: request.json)
            #expect(reply.status == .ok)
            let results = try BatchResponse.parse(try reply.json, expectedCount: request.operations.count).results
            #expect(results.map(\.status) == expected.map(\.status))
            for (index, (result, single)) in zip(results, expected).enumerated() {
                #expect(Self.withoutStamps(result.body) == Self.withoutStamps(single.body), "operation \(index)")
            }
            #expect(results.map(\.status).contains(412) && results.map(\.status).contains(409))
            func rows(_ table: String) async throws -> [JSONValue?] {
                let listed = try await client.send(.get, "/tables/\(table)?__includeDeleted=true", version: .v3)
                return try #require(try listed.json["items"]?.arrayValue).map { Self.withoutStamps($0) }
            }
            #expect(try await rows(batchTable) == (try await rows(singleTable)))

            // Asked for minimal answers, a record written exactly as sent comes back as its system properties, and
            // the item with them is the body the single request got; every other result keeps its whole body.
            do {
                let minimalVersions = try await Self.seed(client, table: minimalTable, version: version)
                let operations = Self.operations(table: minimalTable, versions: minimalVersions)
                let minimal = BatchRequest(operations: operations, minimalAnswers: true)
                let answer = try await client.send(.post, TablePath.batch, version: version, json: minimal.json)
                let minimalResults = try BatchResponse.parse(try answer.json, expectedCount: operations.count).results
                #expect(minimalResults.map(\.status) == expected.map(\.status))
                for (index, (result, single)) in zip(minimalResults, expected).enumerated() {
                    let sent = operations[index].item?.objectValue?.filter {
                        !SystemProperty.isSystemProperty($0.key) || $0.key == SystemProperty.id
                    }
                    var full = Self.withoutStamps(result.body(sent: sent))
                    var reference = Self.withoutStamps(single.body)
                    // The table's name is in no body; ids of inserts without one are generated, so differ.
                    if operations[index].item?["id"] == nil, result.systemProperties != nil {
                        full = full.flatMap { Self.without(SystemProperty.id, $0) }
                        reference = reference.flatMap { Self.without(SystemProperty.id, $0) }
                    }
                    #expect(full == reference, "operation \(index)")
                }
                let minimalIndexes = minimalResults.indices.filter { minimalResults[$0].systemProperties != nil }
                #expect(
                    minimalIndexes == [0, 2],
                    "the insert and the replace were written as sent; the merges kept other properties")
            }
        }
    }

    private static func without(_ name: String, _ body: JSONValue) -> JSONValue {
        guard case .object(var members) = body else { return body }
        members[name] = nil
        return .object(members)
    }

    @Test(
        "a batch over the operation or byte limit is refused with 413 naming the limit; nothing is applied",
        arguments: Backend.available)
    func limits(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(
            backend, tables: [TableOptions(name: table)], maxBodySize: 4096, configure: { $0.maxBatchOperations = 3 }
        ) { client in
            let four = BatchRequest(
                operations: (1...4).map { BatchOperation(kind: .insert, table: table, item: ["id": .string("r\($0)")]) }
            )
            let tooMany = try await client.send(.post, TablePath.batch, json: four.json)
            #expect(tooMany.status == .contentTooLarge)
            #expect(tooMany.errorMessage?.contains("limit of 3") == true, "\(tooMany.errorMessage ?? "")")
            let big = BatchRequest(operations: [
                BatchOperation(
                    kind: .insert, table: table, item: ["text": .string(String(repeating: "x", count: 5000))])
            ])
            let tooLarge = try await client.send(.post, TablePath.batch, json: big.json)
            #expect(tooLarge.status == .contentTooLarge)
            #expect(tooLarge.errorMessage?.contains("4096") == true)
            let listed = try await client.send(.get, "/tables/\(table)")
            #expect(try listed.json["items"]?.arrayValue?.isEmpty == true)

            let three = BatchRequest(operations: Array(four.operations.prefix(3)))
            let packed = try Gzip.compress(CanonicalJSON.encode(three.json, style: .compact))
            let gzipped = try await client.send(
                .post, TablePath.batch, headers: [.contentEncoding: "gzip"], rawBody: packed)
            #expect(
                try BatchResponse.parse(try gzipped.json, expectedCount: 3).results.map(\.status) == [201, 201, 201])
        }
    }

    @Test(
        "malformed envelopes, unknown tables and an unknown version are refused with what is wrong",
        arguments: Backend.available)
    func refusals(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)]) { client in
            let shape = try await client.send(
                .post, TablePath.batch, json: ["operations": [["op": "upsert", "table": .string(table)]]])
            #expect(shape.status == .badRequest)
            #expect(shape.errorMessage?.contains("operations[0].op") == true)
            let unknownVersion = try await client.send(
                .post, TablePath.batch, version: nil, json: ["operations": []],
                headers: [HTTPField.Name(ProtocolHeader.apiVersion)!: "1.0.0"])
            #expect(unknownVersion.status == .badRequest)
            #expect(unknownVersion.errorMessage?.contains("ZUMO-API-VERSION") == true)
            let unknown = BatchRequest(operations: [
                BatchOperation(kind: .delete, table: "nosuchtable", id: "a"),
                BatchOperation(kind: .insert, table: table, item: ["id": "a"])
            ])
            let reply = try await client.send(.post, TablePath.batch, json: unknown.json)
            let results = try BatchResponse.parse(try reply.json, expectedCount: 2).results
            #expect(results.map(\.status) == [404, 201])
            #expect(results[0].body.flatMap(ProtocolErrorBody.message(in:))?.contains("nosuchtable") == true)
        }
    }

    @Test(
        """
        a record nested deeper than the protocol's envelopes carry: 400 alone and in a batch, where the operations \
        beside it are applied
        """,
        arguments: Backend.available)
    func tooDeepRecord(backend: Backend) async throws {
        let table = uniqueTableName()
        var nested: JSONValue = "leaf"
        for _ in 0..<RecordNesting.maximumDepth { nested = ["a": nested] }
        let deep = nested
        try await withServer(backend, tables: [TableOptions(name: table)]) { client in
            let alone = try await client.send(.post, "/tables/\(table)", json: ["id": "deep", "x": deep])
            #expect(alone.status == .badRequest)
            #expect(alone.errorMessage?.contains("levels deep") == true, "\(alone.errorMessage ?? "")")
            let batch = BatchRequest(operations: [
                BatchOperation(kind: .insert, table: table, item: ["id": "one"]),
                BatchOperation(kind: .insert, table: table, item: ["id": "deep", "x": deep]),
                BatchOperation(kind: .insert, table: table, item: ["id": "two"])
            ])
            let reply = try await client.send(.post, TablePath.batch, json: batch.json)
            #expect(reply.status == .ok, "the batch is not refused as a whole")
            let results = try BatchResponse.parse(try reply.json, expectedCount: 3).results
            #expect(results.map(\.status) == [201, 400, 201])
        }
    }

    @Test("the extension is advertised with its limits, and switched off on request", arguments: Backend.available)
    func discovery(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)]) { client in
            let health = try await client.send(.get, TablePath.health, version: nil)
            #expect(
                health[ProtocolHeader.extensions].map(ProtocolExtension.parse(headerValue:))
                    == [.gzipRequests, .batch, .batchMinimalAnswers, .changes, .wholePages])
            #expect(
                BatchLimits.parse(healthDocument: try health.json)
                    == BatchLimits(maxOperations: 1000, maxBytes: ServerConfiguration.defaultMaxBodySize))
        }
        try await withServer(backend, tables: [TableOptions(name: table)], configure: { $0.batch = false }) { client in
            let health = try await client.send(.get, TablePath.health, version: nil)
            #expect(
                health[ProtocolHeader.extensions].map(ProtocolExtension.parse(headerValue:))
                    == [.gzipRequests, .changes, .wholePages])
            #expect(BatchLimits.parse(healthDocument: try health.json) == nil)
            let refused = try await client.send(.post, TablePath.batch, json: ["operations": []])
            #expect(refused.status == .notFound)
        }
    }
}
