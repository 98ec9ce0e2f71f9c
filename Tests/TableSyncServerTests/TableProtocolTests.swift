import Foundation
import GzipCompression
import HTTPTypes
import HummingbirdTesting
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// The table protocol over HTTP, for v2 and v3, on every backend (DESIGN §5).
@Suite("Table protocol over HTTP")
struct TableProtocolTests {
    static let cases: [(Backend, ProtocolVersion)] = Backend.available.flatMap { backend in
        ProtocolVersion.allCases.map { (backend, $0) }
    }

    @Test(
        "insert: 201 with ETag and Location, generated ids, 400 for bad ids, 409 with the server's item",
        arguments: cases)
    func insert(backend: Backend, version: ProtocolVersion) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)]) { client in
            let created = try await client.send(
                .post, "/tables/\(table)", version: version, json: ["id": "a1", "text": "milk", "n": 1.5])
            #expect(created.status == .created)
            let item = try created.json
            #expect(item["id"] == "a1")
            #expect(item["text"] == "milk")
            #expect(item["n"] == .double(1.5))
            #expect(item["deleted"] == false)
            let recordVersion = try #require(item["version"]?.stringValue)
            #expect(created["ETag"] == "\"\(recordVersion)\"")
            #expect(created["Location"] == "http://localhost/tables/\(table)/a1", "the test client's Host is localhost")
            let updatedAt = try #require(item["updatedAt"]?.stringValue)
            #expect(Timestamp(parsing: updatedAt) != nil)
            #expect(item["createdAt"]?.stringValue == updatedAt)

            // An id that is missing, null or "" is generated, as azure-mobile-apps-node does.
            var generatedIDs: Set<String> = []
            for body: JSONValue in [["text": "no id"], ["id": .null, "text": "null id"], ["id": "", "text": "empty id"]]
            {
                let generated = try await client.send(.post, "/tables/\(table)", version: version, json: body)
                #expect(generated.status == .created, "\(body)")
                let generatedID = try #require(try generated.json["id"]?.stringValue)
                #expect(RecordID.isValid(generatedID))
                generatedIDs.insert(generatedID)
            }
            #expect(generatedIDs.count == 3)

            let duplicate = try await client.send(
                .post, "/tables/\(table)", version: version, json: ["id": "a1", "text": "other"])
            #expect(duplicate.status == .conflict)
            #expect(try duplicate.json["text"] == "milk")
            #expect(duplicate["ETag"] == "\"\(recordVersion)\"")

            for badID: JSONValue in ["a/b", "..", .integer(5), "a\u{1}b", .string(String(repeating: "x", count: 256))] {
                let refused = try await client.send(.post, "/tables/\(table)", version: version, json: ["id": badID])
                #expect(refused.status == .badRequest, "id \(badID)")
                #expect(refused.errorMessage?.contains("id") == true)
            }
        }
    }

    @Test(
        "read one: 200 with ETag, 404 when missing, deleted rows 404 (v2) or 410 (v3) unless __includeDeleted",
        arguments: cases)
    func readOne(backend: Backend, version: ProtocolVersion) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)]) { client in
            let created = try await client.send(
                .post, "/tables/\(table)", version: version, json: ["id": "r 1", "text": "x"])
            let found = try await client.send(.get, "/tables/\(table)/r%201", version: version)
            #expect(found.status == .ok)
            #expect(try found.json == (try created.json))
            #expect(found["ETag"] == created["ETag"])

            let missing = try await client.send(.get, "/tables/\(table)/nope", version: version)
            #expect(missing.status == .notFound)
            #expect(missing.errorMessage?.contains("nope") == true)

            _ = try await client.send(.delete, "/tables/\(table)/r%201", version: version)
            let gone = try await client.send(.get, "/tables/\(table)/r%201", version: version)
            #expect(gone.status == (version == .v2 ? .notFound : .gone))
            let included = try await client.send(.get, "/tables/\(table)/r%201?__INCLUDEDELETED=TRUE", version: version)
            #expect(included.status == .ok)
            #expect(try included.json["deleted"] == true)
        }
    }

    @Test(
        """
        update: PATCH merges, PUT replaces, 400 for id mismatch, 412 for stale \
        If-Match, 409 for a stale v2 body version
        """,
        arguments: cases)
    func update(backend: Backend, version: ProtocolVersion) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)]) { client in
            let created = try await client.send(
                .post, "/tables/\(table)", version: version, json: ["id": "u1", "text": "a", "keep": true])
            let firstVersion = try #require(try created.json["version"]?.stringValue)

            let patched = try await client.send(
                .patch, "/tables/\(table)/u1", version: version, json: ["text": "b"],
                headers: [.ifMatch: "\"\(firstVersion)\""])
            #expect(patched.status == .ok)
            let patchedItem = try patched.json
            #expect(patchedItem["text"] == "b")
            #expect(patchedItem["keep"] == true)
            let secondVersion = try #require(patchedItem["version"]?.stringValue)
            #expect(secondVersion != firstVersion)
            #expect(patched["ETag"] == "\"\(secondVersion)\"")
            let firstUpdated = try #require(Timestamp(parsing: try created.json["updatedAt"]?.stringValue ?? ""))
            let secondUpdated = try #require(Timestamp(parsing: patchedItem["updatedAt"]?.stringValue ?? ""))
            #expect(secondUpdated > firstUpdated)
            #expect(patchedItem["createdAt"] == (try created.json["createdAt"]))

            let replaced = try await client.send(
                .put, "/tables/\(table)/u1", version: version, json: ["id": "u1", "text": "c"])
            #expect(replaced.status == .ok)
            #expect(try replaced.json["keep"] == nil)
            #expect(try replaced.json["text"] == "c")

            let stale = try await client.send(
                .put, "/tables/\(table)/u1", version: version, json: ["text": "d"],
                headers: [.ifMatch: "\"\(firstVersion)\""])
            #expect(stale.status == .preconditionFailed)
            #expect(try stale.json["text"] == "c")
            #expect(stale["ETag"] == "\"\(try replaced.json["version"]?.stringValue ?? "")\"")

            let staleBody = try await client.send(
                .patch, "/tables/\(table)/u1", version: version, json: ["text": "e", "version": .string(firstVersion)])
            if version == .v2 {
                #expect(staleBody.status == .conflict)
                #expect(try staleBody.json["text"] == "c")
            } else {
                #expect(staleBody.status == .ok)
            }

            let mismatch = try await client.send(.put, "/tables/\(table)/u1", version: version, json: ["id": "other"])
            #expect(mismatch.status == .badRequest)
            #expect(mismatch.errorMessage?.contains("other") == true)

            let missing = try await client.send(.patch, "/tables/\(table)/none", version: version, json: ["text": "x"])
            #expect(missing.status == .notFound)

            _ = try await client.send(.delete, "/tables/\(table)/u1", version: version)
            let deleted = try await client.send(.put, "/tables/\(table)/u1", version: version, json: ["text": "x"])
            #expect(deleted.status == (version == .v2 ? .notFound : .gone))
        }
    }

    @Test(
        "delete: soft delete bumps version, v2 200 with the item, v3 204, 412 when stale, 404/410 after",
        arguments: cases)
    func delete(backend: Backend, version: ProtocolVersion) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)]) { client in
            let created = try await client.send(.post, "/tables/\(table)", version: version, json: ["id": "d1"])
            let stale = try await client.send(
                .delete, "/tables/\(table)/d1", version: version, headers: [.ifMatch: "\"bm90LWl0\""])
            #expect(stale.status == .preconditionFailed)
            #expect(try stale.json["id"] == "d1")

            let removed = try await client.send(
                .delete, "/tables/\(table)/d1", version: version, headers: [.ifMatch: created["ETag"] ?? ""])
            switch version {
            case .v2:
                #expect(removed.status == .ok)
                #expect(try removed.json["deleted"] == true)
                #expect(try removed.json["version"] != (try created.json["version"]))
            case .v3:
                #expect(removed.status == .noContent)
                #expect(removed.bytes.isEmpty)
            }
            let tombstone = try await client.send(.get, "/tables/\(table)/d1?__includeDeleted=true", version: version)
            #expect(try tombstone.json["deleted"] == true)
            #expect(try tombstone.json["updatedAt"] != (try created.json["updatedAt"]))

            let again = try await client.send(.delete, "/tables/\(table)/d1", version: version)
            #expect(again.status == (version == .v2 ? .notFound : .gone))
            let missing = try await client.send(.delete, "/tables/\(table)/never", version: version)
            #expect(missing.status == .notFound)
        }
    }

    @Test(
        """
        undelete: POST to a deleted record brings it back on its version; 412 when stale, 409 for a live record, 404 \
        for none
        """,
        arguments: cases)
    func undelete(backend: Backend, version: ProtocolVersion) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)]) { client in
            _ = try await client.send(.post, "/tables/\(table)", version: version, json: ["id": "u1", "text": "kept"])
            let live = try await client.send(.post, "/tables/\(table)/u1", version: version)
            #expect(live.status == .conflict)
            #expect(try live.json["text"] == "kept", "the live record's copy")
            _ = try await client.send(.delete, "/tables/\(table)/u1", version: version)
            let tombstone = try await client.send(.get, "/tables/\(table)/u1?__includeDeleted=true", version: version)
            let stale = try await client.send(
                .post, "/tables/\(table)/u1", version: version, headers: [.ifMatch: "\"bm90LWl0\""])
            #expect(stale.status == .preconditionFailed)
            let back = try await client.send(
                .post, "/tables/\(table)/u1", version: version, headers: [.ifMatch: tombstone["ETag"] ?? ""])
            #expect(back.status == .ok)
            #expect(try back.json["deleted"] == false && back.json["text"] == "kept")
            #expect(try back.json["version"] != (try tombstone.json["version"]), "a new version")
            #expect(try await client.send(.get, "/tables/\(table)/u1", version: version).status == .ok)
            #expect(try await client.send(.post, "/tables/\(table)/never", version: version).status == .notFound)
        }
    }

    @Test("hard delete when softDelete=false", arguments: Backend.available)
    func hardDelete(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table, softDelete: false)]) { client in
            _ = try await client.send(.post, "/tables/\(table)", json: ["id": "h1"])
            #expect(try await client.send(.delete, "/tables/\(table)/h1").status == .noContent)
            #expect(try await client.send(.get, "/tables/\(table)/h1?__includeDeleted=true").status == .notFound)
        }
    }

    @Test(
        "list shapes: v2 bare array or results+count, v3 items+count+nextLink; paging, order, select, deleted",
        arguments: cases)
    func list(backend: Backend, version: ProtocolVersion) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table, maxTop: 200)]) { client in
            for index in 0..<120 {
                let id = String(format: "id%03d", index)
                _ = try await client.send(
                    .post, "/tables/\(table)", version: version,
                    json: ["id": .string(id), "group": .integer(Int64(index % 3)), "text": .string("t\(index)")])
            }
            _ = try await client.send(.delete, "/tables/\(table)/id000", version: version)

            let page = try await client.send(.get, "/tables/\(table)", version: version)
            #expect(page.status == .ok)
            switch version {
            case .v2:
                let items = try #require(try page.json.arrayValue)
                #expect(items.count == 50)
                #expect(items.first?["id"] == "id001")
                let counted = try await client.send(
                    .get, "/tables/\(table)?$inlinecount=allpages&$top=5", version: version)
                #expect(try counted.json["count"] == 119)
                #expect(try counted.json["results"]?.arrayValue?.count == 5)
            case .v3:
                let body = try page.json
                #expect(body["items"]?.arrayValue?.count == 100)
                #expect(body["count"] == .null)
                let nextLink = try #require(body["nextLink"]?.stringValue)
                #expect(nextLink == "$skip=100")
                let next = try await client.send(.get, "/tables/\(table)?\(nextLink)", version: version)
                #expect(try next.json["items"]?.arrayValue?.count == 19)
                #expect(try next.json["nextLink"] == .null)
                let counted = try await client.send(.get, "/tables/\(table)?$count=true&$top=5", version: version)
                #expect(try counted.json["count"] == 119)
            }

            func items(_ query: String) async throws -> [JSONValue] {
                let reply = try await client.send(.get, "/tables/\(table)?\(query)", version: version)
                #expect(reply.status == .ok, "\(query): \(reply.errorMessage ?? "")")
                return try reply.json.arrayValue ?? reply.json[version == .v2 ? "results" : "items"]?.arrayValue ?? []
            }
            let ordered = try await items("$orderby=group%20desc,text&$top=3")
            #expect(ordered.map { $0["id"] } == ["id101", "id104", "id107"] as [JSONValue?])
            let skipped = try await items("$orderby=id&$skip=2&$top=2")
            #expect(skipped.map { $0["id"] } == ["id003", "id004"] as [JSONValue?])
            let selected = try await items("$select=text&$top=1")
            #expect(selected.first?["group"] == nil)
            #expect(selected.first?["text"] == "t1")
            // v2 adds the system properties, as this server always did; v3 sends what was selected, as Datasync does.
            #expect((selected.first?["updatedAt"] != nil) == (version == .v2))
            #expect(selected.first?["deleted"] == (version == .v2 ? false : nil))
            let withDeleted = try await items("__includedeleted=True&$top=1")
            #expect(withDeleted.first?["id"] == "id000")
            #expect(withDeleted.first?["deleted"] == true)

            let overMax = try await client.send(.get, "/tables/\(table)?$top=201", version: version)
            #expect(overMax.status == .badRequest)
            #expect(overMax.errorMessage?.contains("$top") == true)
            #expect(overMax[ProtocolHeader.maxTop] == "200", "the refusal says the table's maximum")
            #expect(
                try await client.send(.get, "/tables/\(table)?$top=1", version: version)[ProtocolHeader.maxTop] == "200"
            )
        }
    }

    @Test("bad input is a 4xx with a JSON error naming the problem", arguments: cases)
    func badInput(backend: Backend, version: ProtocolVersion) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], maxBodySize: 4096) { client in
            func expectRefusal(
                _ reply: Reply, _ status: HTTPResponse.Status, mentioning word: String,
                sourceLocation: SourceLocation = #_sourceLocation
            ) {
                #expect(reply.status == status, sourceLocation: sourceLocation)
                #expect(
                    reply.errorMessage?.contains(word) == true, "\(reply.errorMessage ?? "no error body")",
                    sourceLocation: sourceLocation)
            }
            let path = "/tables/\(table)"
            expectRefusal(
                try await client.send(.post, path, version: version, rawBody: Array("{\"id\": ".utf8)), .badRequest,
                mentioning: "JSON")
            expectRefusal(
                try await client.send(.post, path, version: version, json: [1, 2]), .badRequest, mentioning: "array")
            expectRefusal(
                try await client.send(.post, path, version: version, json: ["createdAt": 5]), .badRequest,
                mentioning: "createdAt")
            expectRefusal(
                try await client.send(.post, path, version: version, json: ["deleted": "yes"]), .badRequest,
                mentioning: "deleted")
            expectRefusal(
                try await client.send(.post, path, version: version, json: ["version": 3]), .badRequest,
                mentioning: "version")
            expectRefusal(
                try await client.send(.post, path, version: version, rawBody: []), .badRequest, mentioning: "empty")
            expectRefusal(
                try await client.send(.get, "/tables/nosuchtable", version: version), .notFound,
                mentioning: "nosuchtable")
            let unversioned = try await client.send(.get, path, version: nil)
            #expect(unversioned.status == .ok, "a request without ZUMO-API-VERSION speaks version 3")
            #expect(try unversioned.json["items"] != nil)
            expectRefusal(
                try await client.send(
                    .get, path, version: nil, headers: [HTTPField.Name("zumo-api-version")!: "1.0.0"]), .badRequest,
                mentioning: "1.0.0")
            #expect(try await client.send(.get, "\(path)?zumo-api-version=2.0.0", version: nil).status == .ok)
            expectRefusal(
                try await client.send(.get, "\(path)?$top=abc", version: version), .badRequest, mentioning: "$top")
            expectRefusal(
                try await client.send(.get, "\(path)?$top=99999999999999999999", version: version), .badRequest,
                mentioning: "$top")
            expectRefusal(
                try await client.send(.get, "\(path)?$skip=-1", version: version), .badRequest, mentioning: "$skip")
            expectRefusal(
                try await client.send(.get, "\(path)?$orderby=text%20sideways", version: version), .badRequest,
                mentioning: "sideways")
            expectRefusal(
                try await client.send(.get, "\(path)?$orderby=a;drop", version: version), .badRequest,
                mentioning: "$orderby")
            expectRefusal(
                try await client.send(.get, "\(path)?$select=x'y", version: version), .badRequest, mentioning: "$select"
            )
            expectRefusal(
                try await client.send(.get, "\(path)?__includeDeleted=maybe", version: version), .badRequest,
                mentioning: "__includeDeleted")
            expectRefusal(
                try await client.send(.get, "\(path)?$skip=1&$skip=2", version: version), .badRequest,
                mentioning: "$skip")
            expectRefusal(
                try await client.send(.get, "\(path)?$top=%zz", version: version), .badRequest, mentioning: "%")
            expectRefusal(
                try await client.send(.put, "\(path)/x", version: version, json: ["a": 1], headers: [.ifMatch: "nope"]),
                .badRequest, mentioning: "If-Match")
            let big: JSONValue = ["text": .string(String(repeating: "x", count: 5000))]
            expectRefusal(
                try await client.send(.post, path, version: version, json: big), .contentTooLarge, mentioning: "4096")
            let bomb = try Gzip.compress(CanonicalJSON.encode(big, style: .compact))
            expectRefusal(
                try await client.send(
                    .post, path, version: version, headers: [.contentEncoding: "gzip"], rawBody: bomb),
                .contentTooLarge, mentioning: "4096")
            expectRefusal(
                try await client.send(
                    .post, path, version: version, headers: [.contentEncoding: "gzip"], rawBody: [0x1F, 0x8B, 1, 2]),
                .badRequest, mentioning: "gzip")
            expectRefusal(
                try await client.send(.post, path, version: version, headers: [.contentEncoding: "br"], rawBody: [1]),
                .unsupportedMediaType, mentioning: "br")

            // SQL metacharacters are data, never SQL.
            let sneaky = "x'); DROP TABLE tablesync_records; --"
            let stored = try await client.send(
                .post, path, version: version, json: ["id": .string(sneaky), "text": .string(sneaky)])
            #expect(stored.status == .created)
            let back = try await client.send(
                .get, "\(path)/\(TablePath.percentEncodePathSegment(sneaky))", version: version)
            #expect(try back.json["text"] == .string(sneaky))
            #expect(try await client.send(.get, "\(path)?$orderby=text&$select=text", version: version).status == .ok)
        }
    }

    @Test(
        "gzip: compressed request bodies accepted, large responses compressed when accepted",
        arguments: Backend.available)
    func gzip(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)]) { client in
            let record: JSONValue = ["id": "g1", "text": .string(String(repeating: "compress me ", count: 200))]
            let packed = try Gzip.compress(CanonicalJSON.encode(record, style: .compact))
            let created = try await client.send(
                .post, "/tables/\(table)", headers: [.contentEncoding: "gzip", .acceptEncoding: "gzip, deflate"],
                rawBody: packed)
            #expect(created.status == .created)
            #expect(created[HTTPField.Name.contentEncoding.rawName] == "gzip")
            #expect(try created.json["text"] == record["text"])
            let plain = try await client.send(.get, "/tables/\(table)/g1")
            #expect(plain[HTTPField.Name.contentEncoding.rawName] == nil)
            let refused = try await client.send(.get, "/tables/\(table)/g1", headers: [.acceptEncoding: "gzip;q=0"])
            #expect(refused[HTTPField.Name.contentEncoding.rawName] == nil)
            let small = try await client.send(.get, "/tables/\(table)/nope", headers: [.acceptEncoding: "gzip"])
            #expect(small[HTTPField.Name.contentEncoding.rawName] == nil)
            #expect(small[ProtocolHeader.extensions]?.contains(ProtocolExtension.gzipRequests.rawValue) == true)
        }
    }

    @Test("auth: 401 without a valid token; Bearer and X-ZUMO-AUTH accepted; health open", arguments: Backend.available)
    func auth(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], tokens: ["s3cret"]) { client in
            let anonymous = try await client.send(.get, "/tables/\(table)")
            #expect(anonymous.status == .unauthorized)
            #expect(anonymous.errorMessage?.contains("token") == true)
            #expect(
                try await client.send(.get, "/tables/\(table)", headers: [.authorization: "Bearer wrong"]).status
                    == .unauthorized)
            #expect(
                try await client.send(.get, "/tables/\(table)", headers: [.authorization: "Bearer s3cret"]).status
                    == .ok)
            #expect(
                try await client.send(.get, "/tables/\(table)", headers: [HTTPField.Name("X-ZUMO-AUTH")!: "s3cret"])
                    .status == .ok)
            #expect(try await client.send(.get, "/health", version: nil).status == .ok)
        }
    }

    @Test("over a live loopback socket", arguments: Backend.available)
    func live(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            #expect(
                try await client.send(.post, "/tables/\(table)", version: .v2, json: ["id": "l1"]).status == .created)
            #expect(try await client.send(.get, "/tables/\(table)/l1", version: .v2).status == .ok)
            #expect(try await client.send(.get, "/tables/\(table)", version: .v2).json.arrayValue?.count == 1)
            #expect(try await client.send(.get, "/tables/\(table)/x", version: .v3).status == .notFound)
            let nothing = try await client.send(.get, "/nothing", version: .v3)
            #expect(nothing.errorMessage != nil)
        }
    }
}
