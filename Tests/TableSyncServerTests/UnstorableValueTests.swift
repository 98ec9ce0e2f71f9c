import HTTPTypes
import HummingbirdTesting
import SyncProtocol
@testable import TableSyncServer
import Testing
import TestSupport

/// A value one database cannot store (U+0000 in a string or a property name: PostgreSQL's `jsonb` refuses it) is a
/// 400 naming the record and the property on both databases, and in a batch it is that operation's answer alone.
@Suite("Values a database cannot store")
struct UnstorableValueTests {
    static let unstorable: [([String: JSONValue], String?)] = [
        (["text": "fine", "n": 1], nil),
        (["text": "a\u{0}b"], "text"),
        (["b": "x\u{0}", "a": "y\u{0}"], "a"),
        (["tags": ["ok", "bad\u{0}"]], "tags[1]"),
        (["address": ["street": "x", "city": ["name": "\u{0}"]]], "address.city.name"),
        (["a\u{0}b": "value"], "a\\u0000b"),
        (["nested": ["k\u{0}": 1]], "nested.k\\u0000"),
        (["text": "U+0001 \u{1} and U+FFFD \u{FFFD} are fine"], nil)
    ]

    @Test(
        "the first value holding U+0000 is found, in key order, in strings and property names at any depth",
        arguments: unstorable)
    func firstUnstorable(properties: [String: JSONValue], path: String?) {
        #expect(StorableProperties.firstUnstorable(in: properties) == path)
    }

    @Test(
        "POST, PUT and PATCH with U+0000 are a 400 naming the record and the property; nothing is stored",
        arguments: Backend.available)
    func singleWrites(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            let inserted = try await client.send(.post, "/tables/\(table)", json: ["id": "a", "text": "a\u{0}b"])
            #expect(inserted.status == .badRequest)
            let message = try #require(inserted.errorMessage)
            #expect(
                message.contains("record 'a'") && message.contains("'text'") && message.contains("U+0000"), "\(message)"
            )
            #expect(try await client.send(.get, "/tables/\(table)/a").status == .notFound)

            #expect(
                try await client.send(.post, "/tables/\(table)", json: ["id": "b", "text": "fine"]).status == .created)
            for method in [HTTPRequest.Method.put, .patch] {
                let updated = try await client.send(method, "/tables/\(table)/b", json: ["list": ["x", ["k\u{0}": 1]]])
                #expect(updated.status == .badRequest, "\(method)")
                #expect(updated.errorMessage?.contains("'list[1].k\\u0000'") == true, "\(updated.errorMessage ?? "")")
            }
            #expect(try await client.send(.get, "/tables/\(table)/b").json["text"] == "fine")
        }
    }

    @Test("in a batch the operation with U+0000 is refused alone; the others are applied", arguments: Backend.available)
    func batchOperation(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            let batch = BatchRequest(operations: [
                BatchOperation(kind: .insert, table: table, item: ["id": "a", "text": "first"]),
                BatchOperation(kind: .insert, table: table, item: ["id": "nul", "text": "x\u{0}y"]),
                BatchOperation(kind: .insert, table: table, item: ["id": "c", "text": "third"])
            ])
            let reply = try await client.send(.post, "/batch", json: batch.json)
            #expect(reply.status == .ok)
            let results = try BatchResponse.parse(try reply.json, expectedCount: 3).results
            #expect(results.map(\.status) == [201, 400, 201])
            #expect(results[1].body.flatMap(ProtocolErrorBody.message(in:))?.contains("record 'nul'") == true)
            #expect(try await client.send(.get, "/tables/\(table)/a").status == .ok)
            #expect(try await client.send(.get, "/tables/\(table)/c").status == .ok)
            #expect(try await client.send(.get, "/tables/\(table)/nul").status == .notFound)
        }
    }

    /// The server refuses such values before they reach the database; this asks the database itself, to check that
    /// a write it refuses is answered alone, whatever the value, and the other writes of the transaction are kept.
    @Test(
        "a write the database itself refuses is that write's result; the writes beside it are stored",
        arguments: Backend.available)
    func databaseRefusalIsolated(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withRepository(backend) { repository in
            try await repository.prepare(tables: [TableOptions(name: table)])
            let results = try await repository.write([
                RecordWriteRequest(table: table, id: "a") { _ in .insert(["text": "first"]) },
                RecordWriteRequest(table: table, id: "nul") { _ in .insert(["text": "x\u{0}y"]) },
                RecordWriteRequest(table: table, id: "c") { _ in .insert(["text": "third"]) }
            ])
            #expect(results.count == 3)
            #expect((try? results[0].get())??.id == "a")
            #expect((try? results[2].get())??.id == "c")
            switch (backend, results[1]) {
            case (.sqlite, .success(let stored)):
                #expect(stored?.id == "nul", "SQLite stores U+0000")
            case (.postgres, .failure(let error)):
                #expect(DatabaseFailure(error) == .invalidInput, "\(error)")
                let refusal = try #require(ProtocolError.refusal(for: error, during: .write(table: table, id: "nul")))
                #expect(refusal.status == .badRequest && refusal.message.contains("record 'nul'"), "\(refusal)")
            default:
                Issue.record("unexpected result on \(backend): \(results[1])")
            }
            #expect(try await repository.record(table: table, id: "a") != nil)
            #expect(try await repository.record(table: table, id: "c") != nil)
        }
    }
}
