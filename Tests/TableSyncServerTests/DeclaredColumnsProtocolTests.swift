import HTTPTypes
import HummingbirdTesting
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// A table with declared columns over HTTP, on every backend: every write path validates, dates come back
/// canonical, queries name declared columns only, and a schemaless table beside it is unchanged.
@Suite("Declared columns over HTTP")
struct DeclaredColumnsProtocolTests {
    static func declared(_ name: String) throws -> TableOptions {
        try TableOptions.parse("\(name):columns=text:string;done:boolean;due:date;rank:number")
    }

    @Test(
        """
        a declared string holds up to 1,600 bytes on both databases, however little it compresses and however long \
        the id; a longer one is a 400 naming the column
        """,
        arguments: Backend.available)
    func longStrings(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [try Self.declared(table)]) { client in
            // Random CJK characters (3 bytes each) barely compress; the id is 255 four-byte characters.
            var generator = SystemRandomNumberGenerator()
            func incompressible(bytes: Int) -> String {
                var text = ""
                while text.utf8.count + 3 <= bytes {
                    text.unicodeScalars.append(
                        Unicode.Scalar(UInt32.random(in: 0x4E00...0x9FFF, using: &generator)) ?? "a")
                }
                return text + String(repeating: "a", count: bytes - text.utf8.count)
            }
            let longID = String(
                (0..<RecordID.maximumLength).map { _ in
                    Character(Unicode.Scalar(UInt32.random(in: 0x1F300...0x1F5FF, using: &generator)) ?? "a")
                })
            let most = try await client.send(
                .post, "/tables/\(table)",
                json: ["id": .string(longID), "text": .string(incompressible(bytes: TableSchema.maximumStringBytes))])
            #expect(most.status == .created, "\(most.errorMessage ?? "")")
            for bytes in [TableSchema.maximumStringBytes + 1, 8_000] {
                let reply = try await client.send(
                    .post, "/tables/\(table)", json: ["id": "long", "text": .string(incompressible(bytes: bytes))])
                #expect(reply.status == .badRequest, "\(bytes) bytes: \(reply.errorMessage ?? "")")
                #expect(
                    reply.errorMessage?.contains("'text' holds \(bytes) bytes") == true, "\(reply.errorMessage ?? "")")
            }
        }
    }

    @Test(
        """
        POST, PATCH, PUT and batch operations refuse undeclared properties and \
        wrong types with 400 naming the property
        """,
        arguments: Backend.available)
    func everyWriteIsValidated(backend: Backend) async throws {
        let table = uniqueTableName()
        let free = uniqueTableName("free")
        try await withServer(backend, tables: [try Self.declared(table), TableOptions(name: free)]) { client in
            let created = try await client.send(
                .post, "/tables/\(table)",
                json: [
                    "id": "a", "text": "milk", "done": false, "due": "2024-05-01T12:20:30+02:00", "rank": 2
                ])
            #expect(created.status == .created)
            #expect(try created.json["due"] == "2024-05-01T10:20:30.000Z")
            #expect(try await client.send(.get, "/tables/\(table)/a").json["due"] == "2024-05-01T10:20:30.000Z")
            let nulls = try await client.send(
                .post, "/tables/\(table)", json: ["id": "b", "text": .null, "rank": .null, "due": .null])
            #expect(nulls.status == .created)
            // System properties are checked as for every table, not against the columns.
            let system = try await client.send(
                .post, "/tables/\(table)",
                json: [
                    "id": "s", "createdAt": "2024-01-01T00:00:00Z", "updatedAt": .null, "version": "x",
                    "deleted": false, "rank": 1
                ])
            #expect(system.status == .created)

            let refused: [(JSONValue, String)] = [
                (["id": "c", "colour": "red"], "'colour' is not declared"),
                (["id": "c", "rank": "high"], "'rank' must be a number"),
                (["id": "c", "done": 1], "'done' must be true or false"),
                (["id": "c", "text": ["a"]], "'text' must be a string"),
                (["id": "c", "due": "soon"], "'due' must be a date"),
                (["id": "c", "due": "2024-05-01T10:20:30.0001Z"], "'due' has more precision than a millisecond")
            ]
            for (body, message) in refused {
                let reply = try await client.send(.post, "/tables/\(table)", json: body)
                #expect(reply.status == .badRequest, "\(body)")
                #expect(reply.errorMessage?.contains(message) == true, "\(reply.errorMessage ?? "")")
                #expect(reply.errorMessage?.contains("table \(table)") == true)
            }
            #expect(try await client.send(.get, "/tables/\(table)/c").status == .notFound)

            let patchWrongType = try await client.send(.patch, "/tables/\(table)/a", json: ["rank": "x"])
            #expect(patchWrongType.status == .badRequest)
            #expect(patchWrongType.errorMessage?.contains("'rank'") == true)
            let patchUndeclared = try await client.send(.patch, "/tables/\(table)/a", version: .v2, json: ["extra": 1])
            #expect(patchUndeclared.status == .badRequest)
            #expect(patchUndeclared.errorMessage?.contains("'extra'") == true)
            let patched = try await client.send(
                .patch, "/tables/\(table)/a", json: ["rank": 3, "due": "2024-06-01T00:00Z"])
            #expect(patched.status == .ok)
            #expect(try patched.json["text"] == "milk")
            #expect(try patched.json["due"] == "2024-06-01T00:00:00.000Z")
            let putUndeclared = try await client.send(.put, "/tables/\(table)/a", json: ["id": "a", "colour": "x"])
            #expect(putUndeclared.status == .badRequest)
            #expect(putUndeclared.errorMessage?.contains("'colour'") == true)
            let put = try await client.send(.put, "/tables/\(table)/a", json: ["text": "eggs"])
            #expect(put.status == .ok)
            #expect(try put.json["done"] == nil)

            let batch = BatchRequest(operations: [
                BatchOperation(kind: .insert, table: table, item: ["id": "e", "rank": "bad"]),
                BatchOperation(kind: .merge, table: table, id: "a", item: ["done": true]),
                BatchOperation(kind: .replace, table: table, id: "a", item: ["id": "a", "nope": 1]),
                BatchOperation(kind: .insert, table: table, item: ["id": "f", "due": "2024-05-01T10:20:30.5+00:00"]),
                BatchOperation(kind: .insert, table: free, item: ["id": "x", "colour": "red", "rank": "high"])
            ])
            let answer = try await client.send(.post, TablePath.batch, json: batch.json)
            let results = try BatchResponse.parse(try answer.json, expectedCount: 5).results
            #expect(results.map(\.status) == [400, 200, 400, 201, 201])
            #expect(results[0].body.flatMap(ProtocolErrorBody.message(in:))?.contains("'rank'") == true)
            #expect(results[2].body.flatMap(ProtocolErrorBody.message(in:))?.contains("'nope'") == true)
            #expect(results[3].body?["due"] == "2024-05-01T10:20:30.500Z")
            #expect(try await client.send(.get, "/tables/\(table)/a").json["done"] == true)
            #expect(try await client.send(.get, "/tables/\(free)/x").json["colour"] == "red")
        }
        try await forgetDeclaredColumns(backend, tables: [table])
    }

    @Test(
        "$filter and $orderby name declared columns only; order is typed, missing values first",
        arguments: Backend.available)
    func queries(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [try Self.declared(table)]) { client in
            let records: [JSONValue] = [
                ["id": "a", "rank": 10, "text": "b", "due": "2024-05-01T10:00:00.000Z"],
                ["id": "b", "rank": 9, "text": "a", "due": "2023-05-01T10:00:00+02:00"],
                ["id": "c", "text": "B"],
                ["id": "d", "rank": 10.5, "text": "é", "due": "2024-05-01T10:00:00.001Z"]
            ]
            for record in records {
                #expect(try await client.send(.post, "/tables/\(table)", json: record).status == .created)
            }
            func ids(_ query: String) async throws -> [String] {
                let reply = try await client.send(.get, "/tables/\(table)?\(query)")
                #expect(reply.status == .ok, "\(query): \(reply.errorMessage ?? "")")
                return try #require(try reply.json["items"]?.arrayValue).compactMap { $0["id"]?.stringValue }
            }
            // Numbers order as numbers (9 before 10), strings by code point (B before a before b before é).
            #expect(try await ids("$orderby=rank") == ["c", "b", "a", "d"])
            #expect(try await ids("$orderby=rank%20desc") == ["d", "a", "b", "c"])
            #expect(try await ids("$orderby=text") == ["c", "b", "a", "d"])
            #expect(try await ids("$orderby=due%20desc,id") == ["d", "a", "b", "c"])
            #expect(try await ids("$filter=rank%20ge%2010&$orderby=rank%20desc") == ["d", "a"])
            #expect(try await ids("$filter=due%20lt%202024-05-01T12:00:00.0005%2B02:00&$orderby=due") == ["b", "a"])

            let filter = try await client.send(.get, "/tables/\(table)?$filter=colour%20eq%20'red'")
            #expect(filter.status == .badRequest)
            #expect(filter.errorMessage?.contains("'colour' is not a column of this table") == true)
            let order = try await client.send(.get, "/tables/\(table)?$orderby=colour")
            #expect(order.status == .badRequest)
            #expect(order.errorMessage?.contains("'colour'") == true)
        }
        try await forgetDeclaredColumns(backend, tables: [table])
    }

    /// The JS client's end-to-end test UseBlog posts `postid` to a comment table that declares `postId`, which the
    /// node server stores as `postId`.
    @Test(
        """
        a property matches its declared column in any case, in writes, $filter, $orderby and $select, and is stored \
        and answered under the declared spelling; one column named twice is a 400 naming both spellings
        """,
        arguments: Backend.available)
    func namesMatchInAnyCase(backend: Backend) async throws {
        let table = uniqueTableName("comments")
        let options = try TableOptions.parse("\(table):columns=postId:string;commentText:string;rank:number")
        try await withServer(backend, tables: [options]) { client in
            let created = try await client.send(
                .post, "/tables/\(table)", json: ["id": "c1", "postid": "p1", "COMMENTTEXT": "first", "rank": 2])
            #expect(created.status == .created, "\(created.errorMessage ?? "")")
            #expect(try created.json["postId"] == "p1")
            #expect(try created.json["commentText"] == "first")
            #expect(try created.json["postid"] == nil)
            let second = try await client.send(.post, "/tables/\(table)", json: ["id": "c2", "postId": "p2", "rank": 1])
            #expect(second.status == .created)
            let read = try await client.send(.get, "/tables/\(table)/c1")
            #expect(try read.json["postId"] == "p1")

            let twice = try await client.send(
                .post, "/tables/\(table)", json: ["id": "c3", "postId": "a", "POSTID": "b"])
            #expect(twice.status == .badRequest)
            #expect(twice.errorMessage?.contains("'POSTID' and 'postId'") == true, "\(twice.errorMessage ?? "")")

            let patched = try await client.send(.patch, "/tables/\(table)/c1", json: ["PostID": "p9"])
            #expect(patched.status == .ok)
            #expect(try patched.json.objectValue?.keys.filter { $0.lowercased() == "postid" } == ["postId"])
            #expect(try patched.json["postId"] == "p9")

            func ids(_ query: String) async throws -> [String] {
                let reply = try await client.send(.get, "/tables/\(table)?\(query)")
                #expect(reply.status == .ok, "\(query): \(reply.errorMessage ?? "")")
                return try #require(try reply.json["items"]?.arrayValue).compactMap { $0["id"]?.stringValue }
            }
            #expect(try await ids("$filter=POSTID%20eq%20'p9'") == ["c1"])
            #expect(try await ids("$filter=startswith(postid,%20'p')&$orderby=RANK") == ["c2", "c1"])
            #expect(try await ids("$orderby=Rank%20desc") == ["c1", "c2"])
            let selected = try await client.send(.get, "/tables/\(table)?$select=POSTID&$orderby=rank")
            #expect(try selected.json["items"]?.arrayValue == [["postId": "p2"], ["postId": "p9"]])
        }
        try await forgetDeclaredColumns(backend, tables: [table])
    }

    @Test("columns whose names differ only in case cannot be declared together")
    func columnsDifferingInCase() throws {
        let error = #expect(throws: ConfigurationError.self) {
            try TableOptions.parse("comments:columns=postId:string;postid:number")
        }
        #expect(error?.description.contains("'postId' and 'postid' differ only in case") == true)
    }
}
