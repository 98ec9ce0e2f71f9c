import HTTPTypes
import HummingbirdTesting
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// A per-user table: each user reaches their own records only, and another user's record is answered exactly as a
/// missing one, through every route.
@Suite("Rows per user")
struct PerUserRowsTests {
    static let tokens = [
        StaticToken(secret: "ann-secret-5e2", name: "ann"), StaticToken(secret: "bob-secret-91c", name: "bob"),
        StaticToken(secret: "unnamed-secret-0aa")
    ]

    @Test(
        """
        another user's record is a missing one: read, guessed ids with their \
        versions, undelete, batch, count, filters
        """,
        arguments: Backend.available)
    func anotherUsersRecordIsMissing(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table, perUser: true)], tokens: Self.tokens) {
            client in
            func send(
                _ user: String, _ method: HTTPRequest.Method, _ path: String, version: ProtocolVersion = .v3,
                json: JSONValue? = nil,
                ifMatch: String? = nil
            ) async throws -> Reply {
                var headers: HTTPFields = [.authorization: "Bearer \(user)"]
                if let ifMatch { headers[.ifMatch] = "\"\(ifMatch)\"" }
                return try await client.send(method, path, version: version, json: json, headers: headers)
            }
            let ann = "ann-secret-5e2"
            let bob = "bob-secret-91c"
            var annVersions: [String: String] = [:]
            for id in ["a1", "a2", "shared"] {
                let created = try await send(
                    ann, .post, "/tables/\(table)", json: ["id": .string(id), "text": "ann's secret"])
                #expect(created.status == .created)
                #expect(try created.json["owner"] == nil, "the owner is not sent")
                annVersions[id] = try created.json["version"]?.stringValue
            }
            _ = try await send(ann, .delete, "/tables/\(table)/a2", ifMatch: annVersions["a2"])

            let missing = try await send(bob, .get, "/tables/\(table)/never-was")
            let attempts: [(HTTPRequest.Method, String?, ProtocolVersion)] = [
                (.get, nil, .v3), (.patch, annVersions["a1"], .v3), (.put, annVersions["a1"], .v3),
                (.delete, annVersions["a1"], .v3),
                (.post, annVersions["a2"], .v3), (.patch, nil, .v2)
            ]
            for (method, ifMatch, version) in attempts {
                let body: JSONValue? =
                    method == .patch || method == .put
                    ? ["text": "bob was here", "version": .string(annVersions["a1"]!)] : nil
                for id in ["a1", "a2"] {
                    let reply = try await send(
                        bob, method, "/tables/\(table)/\(id)", version: version, json: body, ifMatch: ifMatch)
                    #expect(reply.status == .notFound, "\(method) \(id) v\(version)")
                    #expect(
                        reply.errorMessage == missing.errorMessage?.replacingOccurrences(of: "never-was", with: id)
                            || reply.errorMessage == "there is no record '\(id)'",
                        "\(method) \(id): \(reply.errorMessage ?? "")")
                    #expect(!String(decoding: reply.bytes, as: UTF8.self).contains("secret"))
                }
            }

            let duplicate = try await send(bob, .post, "/tables/\(table)", json: ["id": "shared", "text": "bob's own"])
            #expect(
                duplicate.status == .created,
                "an id another user holds is a new record of this user's: nothing tells it exists")
            #expect(try duplicate.json["text"] == "bob's own")
            #expect(try await send(ann, .get, "/tables/\(table)/shared").json["text"] == "ann's secret")

            let listed = try await send(bob, .get, "/tables/\(table)?$count=true&__includeDeleted=true")
            #expect(try listed.json["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["shared"])
            #expect(try listed.json["count"] == 1)
            #expect(
                try await send(bob, .get, "/tables/\(table)?$filter=id%20eq%20'a1'").json["items"]?.arrayValue?.isEmpty
                    == true)
            for query in [
                "$filter=owner%20eq%20'ann'", "$filter=startswith(Owner,'a')%20or%20true", "$orderby=owner",
                "$select=text,owner"
            ] {
                let refused = try await send(bob, .get, "/tables/\(table)?\(query)")
                #expect(refused.status == .badRequest, "\(query)")
            }
            #expect(
                try await send(bob, .post, "/tables/\(table)", json: ["id": "b9", "owner": "ann"]).status == .badRequest
            )
            #expect(
                try await send(bob, .patch, "/tables/\(table)/shared", json: ["owner": "ann"]).status == .badRequest)

            let batch = BatchRequest(operations: [
                BatchOperation(
                    kind: .merge, table: table, id: "a1", version: annVersions["a1"], item: ["text": "bob was here"]),
                BatchOperation(kind: .replace, table: table, id: "a1", item: ["id": "a1", "text": "bob was here"]),
                BatchOperation(kind: .delete, table: table, id: "a1", version: annVersions["a1"]),
                BatchOperation(kind: .insert, table: table, item: ["id": "a1", "text": "bob's a1"])
            ]).json
            let results = try BatchResponse.parse(
                try await send(bob, .post, "/batch", json: batch).json, expectedCount: 4
            ).results
            #expect(results.map(\.status) == [404, 404, 404, 201])
            let annA1 = try await send(ann, .get, "/tables/\(table)/a1")
            let annA1Record = try annA1.json
            #expect(
                annA1.status == .ok && annA1Record["text"] == "ann's secret"
                    && annA1Record["version"]?.stringValue == annVersions["a1"],
                "ann's record untouched")

            #expect(try await client.send(.get, "/tables/\(table)").status == .unauthorized)
            #expect(
                try await send("unnamed-secret-0aa", .get, "/tables/\(table)").status == .forbidden,
                "a token that names no user owns no rows")
        }
    }
}
