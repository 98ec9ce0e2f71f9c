import Foundation
import SyncProtocol
@testable import TableSyncServer
import Testing
import TestSupport

/// Each `$filter` operator and function, run as SQL on every backend and by ``FilterEvaluator`` on the same
/// records: both must select the same records.
@Suite("$filter: SQL agrees with the local evaluator")
struct FilterAgreementTests {
    static let records: [String: [String: JSONValue]] = [
        "r1": ["text": "Buy milk", "n": 4, "price": 2.5, "done": false, "due": "2024-05-01T10:20:30.000Z", "tags": .null],
        "r2": ["text": "buy bread", "n": 7, "price": 10, "done": true, "due": "2023-12-31T23:59:59.999Z"],
        "r3": ["text": "  spaced  ", "n": -3, "price": 0.5, "done": true],
        "r4": ["text": "Apfel", "n": 0, "done": "yes", "due": "not a date"],
        "r5": ["n": "12", "price": .null, "nested": ["a": 1]],
        "r6": ["text": "x'); DROP TABLE tablesync_records; --", "n": 100, "price": 99.99, "done": false, "due": "2025-01-01T00:00:00.000Z"],
    ]

    static let filters: [String] = [
        // comparison and logic
        "text eq 'Buy milk'", "text ne 'Buy milk'", "n gt 4", "n ge 4", "n lt 4", "n le 4", "price gt 2", "price ge 10",
        "n eq 4.0", "text gt 'C'", "text lt 'b'", "done eq true", "done", "not done", "done eq false and n gt 0",
        "done or n gt 50", "not (n gt 4)", "not (text eq 'Buy milk')", "text eq null", "text ne null", "price eq null",
        "tags eq null", "nested eq null", "n eq '12'", "done eq 'yes'", "(n gt 0 and n lt 10) or text eq 'Apfel'",
        "n gt 4 or not done",
        // arithmetic
        "n add 1 eq 5", "n sub 1 eq 3", "n mul 2 gt 10", "n div 2 eq 2", "n mod 2 eq 1", "price mul 2 eq 5", "-n eq 3",
        // string functions
        "startswith(text, 'Buy')", "endswith(text, 'milk')", "substringof('read', text)", "contains(text, 'uy')",
        "indexof(text, 'milk') eq 4", "indexof(text, 'zzz') eq -1", "length(text) eq 8", "tolower(text) eq 'buy milk'",
        "toupper(text) eq 'BUY MILK'", "trim(text) eq 'spaced'", "concat(text, '!') eq 'Buy milk!'",
        "substring(text, 4) eq 'milk'", "substring(text, 0, 3) eq 'Buy'", "substring(text, 1, 2) eq 'uy'",
        "not startswith(text, 'B')", "contains(text, '''')", "startswith(text, '%')",
        // dates
        "year(due) eq 2024", "month(due) eq 12", "day(due) eq 31", "hour(due) eq 23", "minute(due) eq 59", "second(due) eq 59",
        "due gt datetimeoffset'2024-01-01T00:00:00.000Z'", "due lt 2024-01-01T00:00:00Z", "due eq datetime'2024-05-01T10:20:30Z'",
        "cast(due, Edm.DateTimeOffset) gt 2024-01-01T00:00:00Z", "updatedAt gt datetime'2000-01-01T00:00:00Z'",
        "createdAt lt 2000-01-01T00:00:00Z", "year(updatedAt) ge 2024", "month(createdAt) ge 1",
        // numbers
        "round(price) eq 3", "floor(price) eq 2", "ceiling(price) eq 1", "round(n) eq 4",
        // in, system properties
        "n in (4, 7)", "text in ('Buy milk', 'buy bread')", "id eq 'r1'", "id gt 'r3'", "id in ('r2', 'r5')",
        "deleted eq false", "not deleted",
    ]

    @Test("every filter selects the same records in SQL and in the evaluator", arguments: Backend.available)
    func agreement(backend: Backend) async throws {
        let table = uniqueTableName("filter")
        try await withRepository(backend) { repository in
            try await repository.prepare(tables: [table])
            var stored: [StoredRecord] = []
            for (id, properties) in Self.records.sorted(by: { $0.key < $1.key }) {
                let record = try await repository.write(table: table, id: id) { _ in .insert(properties) }
                stored.append(try #require(record))
            }
            for text in Self.filters {
                let filter = try FilterParser.parse(text)
                let expected = Set(stored.filter { FilterEvaluator.matches(filter, record: $0.json()) }.map(\.id))
                var query = ListQuery(top: 1000)
                query.filter = filter
                let selected: Set<String>
                do {
                    selected = Set(try await repository.list(table: table, query: query).records.map(\.id))
                } catch {
                    Issue.record("\(text): \(error)")
                    continue
                }
                #expect(selected == expected, "\(backend): \(text)")
            }
        }
    }

    /// The pull's keyset cursor is translated to a row comparison; from every record as the cursor (and from
    /// ids just before and after it), it must select exactly what the evaluator's `OR` selects.
    @Test("the keyset cursor selects the same records in SQL and in the evaluator", arguments: Backend.available)
    func keysetCursor(backend: Backend) async throws {
        let table = uniqueTableName("keyset")
        try await withRepository(backend) { repository in
            try await repository.prepare(tables: [table])
            var stored: [StoredRecord] = []
            for (id, properties) in Self.records.sorted(by: { $0.key < $1.key }) {
                stored.append(try #require(try await repository.write(table: table, id: id) { _ in .insert(properties) }))
            }
            for record in stored {
                for lastID in ["", record.id, record.id + "~", "r", "s"] {
                    let instant = FilterExpression.literal(.dateTime(Timestamp(ticks: record.updatedAt)))
                    let updatedAt = FilterExpression.property("updatedAt")
                    let cursor = FilterExpression.binary(.or, .binary(.gt, updatedAt, instant),
                                                         .binary(.and, .binary(.eq, updatedAt, instant),
                                                                 .binary(.gt, .property("id"), .literal(.string(lastID)))))
                    let expected = stored.filter { FilterEvaluator.matches(cursor, record: $0.json()) }.map(\.id)
                    var query = ListQuery(top: 1000)
                    query.filter = cursor
                    query.orderBy = [OrderByKey(property: "updatedAt", descending: false), OrderByKey(property: "id", descending: false)]
                    let selected = try await repository.list(table: table, query: query).records.map(\.id)
                    #expect(selected == expected, "\(backend): after (\(record.updatedAt), \(lastID))")
                }
            }
        }
    }

    @Test("every filter is also accepted over HTTP", arguments: Backend.available)
    func overHTTP(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)]) { client in
            _ = try await client.send(.post, "/tables/\(table)", json: .object(Self.records["r1"]!.merging(["id": "r1"]) { a, _ in a }))
            for text in Self.filters {
                let reply = try await client.send(.get, "/tables/\(table)?$filter=\(TablePath.percentEncodePathSegment(text))")
                #expect(reply.status == .ok, "\(text): \(reply.errorMessage ?? "")")
            }
            let unknown = try await client.send(.get, "/tables/\(table)?$filter=frobnicate(text)")
            #expect(unknown.status == .badRequest)
            #expect(unknown.errorMessage?.contains("$filter") == true)
            let broken = try await client.send(.get, "/tables/\(table)?$filter=text%20eq")
            #expect(broken.status == .badRequest)
            let mismatch = try await client.send(.get, "/tables/\(table)?$filter=id%20eq%205")
            #expect(mismatch.status == .badRequest)
            let version = try await client.send(.get, "/tables/\(table)?$filter=version%20eq%20'x'")
            #expect(version.status == .badRequest)
        }
    }
}
