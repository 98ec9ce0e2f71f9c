import Foundation
import SyncProtocol
@testable import TableSyncServer
import Testing
import TestSupport

/// Each `$filter` operator and function, on one table of cases: the records a filter selects, checked against
/// ``FilterEvaluator`` (the local reference) and against the SQL translation on every backend.
@Suite("$filter: SQL agrees with the local evaluator")
struct FilterAgreementTests {
    /// Records and the filters over them, each with the ids it selects; `schema` declares the table's columns.
    struct Fixture: Sendable, CustomTestStringConvertible {
        let name: String
        var schema: TableSchema?
        let records: [String: [String: JSONValue]]
        let cases: [(filter: String, selects: Set<String>)]
        var testDescription: String { name }
    }

    static let records: [String: [String: JSONValue]] = [
        "r1": [
            "text": "Buy milk", "n": 4, "price": 2.5, "done": false, "due": "2024-05-01T10:20:30.000Z", "tags": .null
        ],
        "r2": ["text": "buy bread", "n": 7, "price": 10, "done": true, "due": "2023-12-31T23:59:59.999Z"],
        "r3": ["text": "  spaced  ", "n": -3, "price": 0.5, "done": true],
        "r4": ["text": "Apfel", "n": 0, "done": "yes", "due": "not a date"],
        "r5": ["n": "12", "price": .null, "nested": ["a": 1]],
        "r6": [
            "text": "x'); DROP TABLE tablesync_records; --", "n": 100, "price": 99.99, "done": false,
            "due": "2025-01-01T00:00:00.000Z"
        ]
    ]

    static let all: Set<String> = ["r1", "r2", "r3", "r4", "r5", "r6"]
    static let withText: Set<String> = ["r1", "r2", "r3", "r4", "r6"]

    /// Records of mixed JSON types, as a schemaless table holds them.
    static let schemaless = Fixture(
        name: "schemaless", records: records,
        cases: [
            // comparison and logic
            ("text eq 'Buy milk'", ["r1"]), ("text ne 'Buy milk'", ["r2", "r3", "r4", "r5", "r6"]),
            ("n gt 4", ["r2", "r6"]), ("n ge 4", ["r1", "r2", "r6"]), ("n lt 4", ["r3", "r4"]),
            ("n le 4", ["r1", "r3", "r4"]),
            ("price gt 2", ["r1", "r2", "r6"]), ("price ge 10", ["r2", "r6"]), ("n eq 4.0", ["r1"]),
            ("text gt 'C'", ["r2", "r6"]), ("text lt 'b'", ["r1", "r3", "r4"]),
            ("done eq true", ["r2", "r3"]), ("done", ["r2", "r3"]), ("not done", ["r1", "r6"]),
            ("done eq false and n gt 0", ["r1", "r6"]), ("done or n gt 50", ["r2", "r3", "r6"]),
            ("not (n gt 4)", ["r1", "r3", "r4", "r5"]), ("not (text eq 'Buy milk')", ["r2", "r3", "r4", "r5", "r6"]),
            ("text eq null", ["r5"]), ("text ne null", withText), ("price eq null", ["r4", "r5"]),
            ("tags eq null", all), ("nested eq null", all), ("n eq '12'", ["r5"]), ("done eq 'yes'", ["r4"]),
            ("(n gt 0 and n lt 10) or text eq 'Apfel'", ["r1", "r2", "r4"]), ("n gt 4 or not done", ["r1", "r2", "r6"]),
            // arithmetic
            ("n add 1 eq 5", ["r1"]), ("n sub 1 eq 3", ["r1"]), ("n mul 2 gt 10", ["r2", "r6"]),
            ("n div 2 eq 2", ["r1"]),
            ("n mod 2 eq 1", ["r2"]), ("price mul 2 eq 5", ["r1"]), ("-n eq 3", ["r3"]),
            // arithmetic of literals alone, past 64 bits: doubles, as the evaluator computes them, on both databases
            ("9223372036854775807 add 1 eq 9223372036854775808.0 and n eq 4", ["r1"]),
            ("-9223372036854775807 sub 2 eq -9223372036854775809.0 and n eq 4", ["r1"]),
            ("4611686018427387904 mul 2 eq 9223372036854775808.0 and n eq 4", ["r1"]),
            ("-(-9223372036854775807 sub 1) gt 0 and n eq 4", ["r1"]), ("1 div 0 eq null and n eq 4", ["r1"]),
            ("n lt 7 div 2", ["r3", "r4"]), ("n eq 2 add 2", ["r1"]),
            // string functions
            ("startswith(text, 'Buy')", ["r1"]), ("endswith(text, 'milk')", ["r1"]),
            ("substringof('read', text)", ["r2"]),
            ("contains(text, 'uy')", ["r1", "r2"]), ("indexof(text, 'milk') eq 4", ["r1"]),
            ("indexof(text, 'zzz') eq -1", withText), ("length(text) eq 8", ["r1"]),
            ("tolower(text) eq 'buy milk'", ["r1"]), ("toupper(text) eq 'BUY MILK'", ["r1"]),
            ("trim(text) eq 'spaced'", ["r3"]),
            ("concat(text, '!') eq 'Buy milk!'", ["r1"]), ("substring(text, 4) eq 'milk'", ["r1"]),
            ("substring(text, 0, 3) eq 'Buy'", ["r1"]), ("substring(text, 1, 2) eq 'uy'", ["r1", "r2"]),
            ("not startswith(text, 'B')", ["r2", "r3", "r4", "r6"]), ("contains(text, '''')", ["r6"]),
            ("startswith(text, '%')", []),
            ("replace(text, ' ', '') eq 'Buymilk'", ["r1"]), ("replace(text, 'b', 'B') eq 'Buy Bread'", ["r2"]),
            ("replace(text, '', 'x') eq 'Apfel'", ["r4"]), ("length(replace(text, ' ', '')) eq 6", ["r3"]),
            ("replace(n, '1', '2') eq '22'", ["r5"]), ("replace(text, '''', '\"') ne text", ["r6"]),
            // type functions
            ("isof(text, Edm.String)", withText), ("isof(n, Edm.Double)", withText), ("isof(n, 'Edm.String')", ["r5"]),
            ("isof(done, Edm.Boolean)", ["r1", "r2", "r3", "r6"]), ("not isof(done, Edm.Boolean)", ["r4", "r5"]),
            ("isof(price, Edm.Double)", ["r1", "r2", "r3", "r6"]), ("isof(nested, Edm.String)", []),
            ("isof(tags, Edm.Boolean)", []),
            ("isof(updatedAt, Edm.String)", all), ("isof(id, Edm.Double)", []), ("isof(deleted, Edm.Boolean)", all),
            ("isof('a', Edm.String) and isof(2024-01-01T00:00:00Z, Edm.String) eq false", all),
            // dates
            ("year(due) eq 2024", ["r1"]), ("month(due) eq 12", ["r2"]), ("day(due) eq 31", ["r2"]),
            ("hour(due) eq 23", ["r2"]),
            ("minute(due) eq 59", ["r2"]), ("second(due) eq 59", ["r2"]),
            ("due gt datetimeoffset'2024-01-01T00:00:00.000Z'", ["r1", "r6"]), ("due lt 2024-01-01T00:00:00Z", ["r2"]),
            ("due eq datetime'2024-05-01T10:20:30Z'", ["r1"]),
            ("cast(due, Edm.DateTimeOffset) gt 2024-01-01T00:00:00Z", ["r1", "r6"]),
            ("updatedAt gt datetime'2000-01-01T00:00:00Z'", all), ("createdAt lt 2000-01-01T00:00:00Z", []),
            ("year(updatedAt) ge 2024", all), ("month(createdAt) ge 1", all),
            // numbers
            ("round(price) eq 3", ["r1"]), ("floor(price) eq 2", ["r1"]), ("ceiling(price) eq 1", ["r3"]),
            ("round(n) eq 4", ["r1"]),
            // in, system properties
            ("n in (4, 7)", ["r1", "r2"]), ("text in ('Buy milk', 'buy bread')", ["r1", "r2"]), ("id eq 'r1'", ["r1"]),
            ("id gt 'r3'", ["r4", "r5", "r6"]), ("id in ('r2', 'r5')", ["r2", "r5"]), ("deleted eq false", all),
            ("not deleted", all)
        ])

    static let declaredSchema: TableSchema = {
        do {
            return try TableSchema(parsing: "text:string;n:number;price:number;done:boolean;due:date")
        } catch {
            preconditionFailure("\(error)")
        }
    }()

    static let allDeclared: Set<String> = ["d1", "d2", "d3", "d4", "d5", "d6"]

    /// Records of a table with declared columns: every value of its column's type or missing, so the SQL is the
    /// typed expression each column's index is built on, and dates are canonical text.
    static let declared = Fixture(
        name: "declared columns", schema: declaredSchema,
        records: [
            "d1": ["text": "Buy milk", "n": 4, "price": 2.5, "done": false, "due": "2024-05-01T10:20:30.000Z"],
            "d2": ["text": "buy bread", "n": 7, "price": 10, "done": true, "due": "2023-12-31T23:59:59.999Z"],
            "d3": ["text": "  spaced  ", "n": -3, "price": 0.5, "done": true],
            "d4": ["text": "Apfel", "n": 0, "price": .null, "due": "2024-05-01T10:20:30.001Z"],
            "d5": ["n": .null],
            "d6": [
                "text": "x'); DROP TABLE tablesync_records; --", "n": 100, "price": 99.99, "done": false,
                "due": "2025-01-01T00:00:00.000Z"
            ]
        ],
        cases: [
            // comparisons of each type, null and logic
            ("text eq 'Buy milk'", ["d1"]), ("text ne 'Buy milk'", ["d2", "d3", "d4", "d5", "d6"]),
            ("text gt 'C'", ["d2", "d6"]),
            ("'C' lt text", ["d2", "d6"]), ("text eq null", ["d5"]),
            ("n gt 4", ["d2", "d6"]), ("n le 4", ["d1", "d3", "d4"]), ("not (n gt 4)", ["d1", "d3", "d4", "d5"]),
            ("n eq null", ["d5"]),
            ("n eq 4.0", ["d1"]), ("price ge 10", ["d2", "d6"]), ("price eq null", ["d4", "d5"]),
            ("n gt price", ["d1", "d6"]),
            ("done", ["d2", "d3"]), ("not done", ["d1", "d6"]), ("done eq false", ["d1", "d6"]),
            ("done ne true", ["d1", "d4", "d5", "d6"]),
            ("done eq true or price gt 50", ["d2", "d3", "d6"]),
            // dates: canonical text against instants, literals between milliseconds rounded the right way
            ("due gt 2024-05-01T10:20:30Z", ["d4", "d6"]), ("due ge 2024-05-01T10:20:30Z", ["d1", "d4", "d6"]),
            ("due lt 2024-05-01T10:20:30.001Z", ["d1", "d2"]), ("due le 2024-05-01T10:20:30.000+00:00", ["d1", "d2"]),
            ("due gt 2024-05-01T10:20:30.0005Z", ["d4", "d6"]), ("due ge 2024-05-01T10:20:30.0005Z", ["d4", "d6"]),
            ("due lt 2024-05-01T10:20:30.0005Z", ["d1", "d2"]), ("due le 2024-05-01T10:20:30.0005Z", ["d1", "d2"]),
            ("due eq 2024-05-01T10:20:30.0005Z", []), ("due ne 2024-05-01T10:20:30.0005Z", allDeclared),
            ("not (due eq 2024-05-01T10:20:30.0005Z)", allDeclared),
            ("not (due gt 2024-05-01T10:20:30Z)", ["d1", "d2", "d3", "d5"]),
            ("due eq datetimeoffset'2024-05-01T12:20:30+02:00'", ["d1"]),
            ("due ne 2024-05-01T10:20:30Z", ["d2", "d3", "d4", "d5", "d6"]),
            ("2024-01-01T00:00:00Z lt due", ["d1", "d4", "d6"]), ("due eq null", ["d3", "d5"]),
            ("due in (2024-05-01T10:20:30Z, 2025-01-01T00:00:00Z)", ["d1", "d6"]),
            ("due in (2024-05-01T10:20:30.0005Z, null)", ["d3", "d5"]),
            ("due gt '2024'", ["d1", "d4", "d6"]), ("cast(due, Edm.DateTimeOffset) lt 2024-01-01T00:00:00Z", ["d2"]),
            ("year(due) eq 2024", ["d1", "d4"]), ("month(due) eq 12 and day(due) eq 31", ["d2"]),
            ("second(due) eq 30", ["d1", "d4"]),
            ("startswith(due, '2024')", ["d1", "d4"]),
            // functions and arithmetic on typed columns
            ("n add 1 eq 5", ["d1"]), ("n mod 2 eq 1", ["d2"]), ("round(price) eq 3", ["d1"]),
            ("length(text) eq 8", ["d1"]),
            ("tolower(text) eq 'buy milk'", ["d1"]), ("replace(text, 'b', 'B') eq 'Buy Bread'", ["d2"]),
            ("isof(done, Edm.Boolean)", ["d1", "d2", "d3", "d6"]), ("isof(due, Edm.String)", ["d1", "d2", "d4", "d6"]),
            ("isof(n, Edm.String)", []), ("isof(price, Edm.Double)", ["d1", "d2", "d3", "d6"]),
            // in and system properties
            ("n in (4, 7, null)", ["d1", "d2", "d5"]), ("text in ('Apfel', 'Buy milk')", ["d1", "d4"]),
            ("not (text in ('Apfel', 'Buy milk'))", ["d2", "d3", "d5", "d6"]), ("id eq 'd3'", ["d3"]),
            ("updatedAt gt 2000-01-01T00:00:00Z and n ge 0", ["d1", "d2", "d4", "d6"])
        ])

    /// Letters beyond ASCII, which `tolower` and `toupper` map on every backend: SQLite's own `lower` and `upper` map
    /// ASCII letters only, so the server gives SQLite functions of its own. (`ß` is left out: the evaluator and SQLite
    /// make `SS` of it, PostgreSQL keeps it, mapping one character to one.)
    static let beyondASCII = Fixture(
        name: "letters beyond ASCII",
        records: [
            "u1": ["text": "Amélie"], "u2": ["text": "ÉCOLE"], "u3": ["text": "Москва"], "u4": ["text": "amelie"]
        ],
        cases: [
            ("toupper(text) eq 'AMÉLIE'", ["u1"]), ("tolower(text) eq 'amélie'", ["u1"]),
            ("tolower(text) eq 'école'", ["u2"]), ("toupper(text) eq 'МОСКВА'", ["u3"]),
            ("tolower(text) eq 'москва'", ["u3"]), ("startswith(toupper(text), 'ÉC')", ["u2"]),
            ("contains(tolower(text), 'é')", ["u1", "u2"]), ("toupper(text) eq 'AMELIE'", ["u4"]),
            ("tolower(toupper(text)) eq tolower(text)", ["u1", "u2", "u3", "u4"])
        ])

    static let fixtures = [schemaless, declared, beyondASCII]

    @Test("every case selects its records, in the evaluator and in SQL", arguments: Backend.available, fixtures)
    func agreement(backend: Backend, fixture: Fixture) async throws {
        let table = uniqueTableName("filter")
        try await withRepository(backend, declaringColumns: fixture.schema != nil) { repository in
            try await repository.prepare(tables: [TableOptions(name: table, schema: fixture.schema)])
            var stored: [StoredRecord] = []
            for (id, properties) in fixture.records.sorted(by: { $0.key < $1.key }) {
                let valid = try fixture.schema?.validate(properties) ?? properties
                #expect(valid == properties, "\(id) is stored as written")
                let record = try await repository.write(table: table, id: id) { _ in .insert(valid) }
                stored.append(try #require(record))
            }
            for (text, expected) in fixture.cases {
                guard let filter = try? FilterParser.parse(text) else {
                    Issue.record("\(text) does not parse")
                    continue
                }
                let evaluated = Set(stored.filter { FilterEvaluator.matches(filter, record: $0.json()) }.map(\.id))
                #expect(evaluated == expected, "evaluator: \(text)")
                var query = ListQuery(top: 1000)
                query.filter = filter
                query.schema = fixture.schema
                let selected: Set<String>
                do {
                    selected = Set(try await repository.list(table: table, query: query).records.map(\.id))
                } catch {
                    Issue.record("\(backend): \(text): \(error)")
                    continue
                }
                #expect(selected == expected, "\(backend): \(text)")
            }
            if fixture.schema != nil { try await repository.prepare(tables: [TableOptions(name: table)]) }
        }
    }

    /// The pull's keyset cursor is translated to a row comparison; from every record as the cursor (and from
    /// ids just before and after it), it must select exactly what the evaluator's `OR` selects.
    @Test("the keyset cursor selects the same records in SQL and in the evaluator", arguments: Backend.available)
    func keysetCursor(backend: Backend) async throws {
        let table = uniqueTableName("keyset")
        try await withRepository(backend) { repository in
            try await repository.prepare(tables: [TableOptions(name: table)])
            var stored: [StoredRecord] = []
            for (id, properties) in Self.records.sorted(by: { $0.key < $1.key }) {
                stored.append(
                    try #require(try await repository.write(table: table, id: id) { _ in .insert(properties) }))
            }
            for record in stored {
                for lastID in ["", record.id, record.id + "~", "r", "s"] {
                    let instant = FilterExpression.literal(.dateTime(Timestamp(ticks: record.updatedAt)))
                    let updatedAt = FilterExpression.property("updatedAt")
                    let cursor = FilterExpression.binary(
                        .or, .binary(.gt, updatedAt, instant),
                        .binary(
                            .and, .binary(.eq, updatedAt, instant),
                            .binary(.gt, .property("id"), .literal(.string(lastID)))))
                    let expected = stored.filter { FilterEvaluator.matches(cursor, record: $0.json()) }.map(\.id)
                    var query = ListQuery(top: 1000)
                    query.filter = cursor
                    query.orderBy = [
                        OrderByKey(property: "updatedAt", descending: false),
                        OrderByKey(property: "id", descending: false)
                    ]
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
            _ = try await client.send(
                .post, "/tables/\(table)", json: .object(Self.records["r1"]!.merging(["id": "r1"]) { a, _ in a }))
            for (text, _) in Self.schemaless.cases {
                let reply = try await client.send(
                    .get, "/tables/\(table)?$filter=\(TablePath.percentEncodePathSegment(text))")
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
