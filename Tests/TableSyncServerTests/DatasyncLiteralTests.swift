import Foundation
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// The `$filter` literals Datasync's clients send for `DateOnly`, `TimeOnly` and `Guid` values (issue 45, item 3),
/// over a live server on each database: the movies of Datasync's `Query_Tests.cs` with release dates stored as dates
/// and as date-times, and kitchen-sink records with times of day and guids.
@Suite("Datasync literals")
struct DatasyncLiteralTests {
    static let guid = "29386779-34b1-464a-bb5b-4053c2ee61b3"

    /// Release dates in both forms a record may hold one; `id-000` and `id-003` are the two released on 1994-10-14,
    /// as in Datasync's movie data.
    static let records: [JSONValue] = [
        [
            "id": "id-000", "releaseDate": "1994-10-14", "performance": "12:24:00",
            "guidValue": .string(guid.uppercased())
        ],
        ["id": "id-003", "releaseDate": "1994-10-14T00:00:00.000Z", "performance": "09:52:35.321"],
        [
            "id": "id-006", "releaseDate": "1999-12-31T00:00:00.000Z", "performance": "23:00:00",
            "guidValue": .string(guid)
        ],
        ["id": "id-008", "releaseDate": "2000-01-01", "performance": "12:24", "guidValue": "not a guid"],
        ["id": "id-009", "releaseDate": "not a date", "guidValue": "00000000-0000-0000-0000-000000000000"],
        ["id": "29386779-34B1-464A-BB5B-4053C2EE61B3"]
    ]

    /// Each filter as Datasync's client writes it, with the ids it selects; the comment names the Datasync test or
    /// client code it stands for.
    static let cases: [(filter: String, selects: Set<String>)] = [
        // Query_Tests.cs, Query_Test_030: releaseDate eq cast(1994-10-14,Edm.Date)
        ("releaseDate eq cast(1994-10-14,Edm.Date)", ["id-000", "id-003"]),
        // Query_Tests.cs, Query_Test_031: releaseDate ge cast(1999-12-31,Edm.Date)
        ("releaseDate ge cast(1999-12-31,Edm.Date)", ["id-006", "id-008"]),
        // Query_Tests.cs, the bare v4 form of the same date comparisons
        ("releaseDate lt 1999-12-31", ["id-000", "id-003"]), ("releaseDate gt 1994-10-14", ["id-006", "id-008"]),
        ("releaseDate le 1994-10-14", ["id-000", "id-003"]),
        ("releaseDate ne cast(1994-10-14,Edm.Date)", ["id-006", "id-008", "id-009", Self.upperID]),
        ("releaseDate in (1994-10-14, 2000-01-01)", ["id-000", "id-003", "id-008"]),
        ("updatedAt gt cast(2000-01-01,Edm.Date)", Set(Self.ids)),
        ("updatedAt lt 2000-01-01", []),
        // ODataExpressionVisitor.cs (client): TimeOnly constants as cast(HH:mm:ss,Edm.TimeOfDay)
        ("performance eq cast(12:24:00,Edm.TimeOfDay)", ["id-000"]),
        ("performance gt cast(12:24:00,Edm.TimeOfDay)", ["id-006"]),
        ("performance lt 12:24", ["id-003"]), ("performance ge 09:52:35.321", ["id-000", "id-003", "id-006"]),
        // ODataExpressionVisitor.cs (client): Guid constants as cast(<guid>,Edm.Guid), compared as .NET compares Guids
        ("guidValue eq cast(\(guid.uppercased()),Edm.Guid)", ["id-000", "id-006"]),
        ("guidValue ne \(guid)", ["id-003", "id-008", "id-009", Self.upperID]),
        ("id eq cast(\(guid),Edm.Guid)", [Self.upperID])
    ]

    static let upperID = "29386779-34B1-464A-BB5B-4053C2EE61B3"
    static var ids: [String] { records.compactMap { $0["id"]?.stringValue } }

    @Test("Datasync's date, time-of-day and guid literals select what Datasync selects", arguments: Backend.available)
    func literalsSelect(backend: Backend) async throws {
        let table = uniqueTableName("literals")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            for record in Self.records {
                try #require(try await client.send(.post, "/tables/\(table)", json: record).status == .created)
            }
            for (filter, expected) in Self.cases {
                let reply = try await client.send(
                    .get, "/tables/\(table)?$filter=\(TablePath.percentEncodeQueryComponent(filter))&$top=100")
                #expect(reply.status == .ok, "\(backend): \(filter): \(reply.errorMessage ?? "")")
                let selected = Set(try reply.json["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
                #expect(selected == expected, "\(backend): \(filter)")
            }
        }
    }

    @Test("the local evaluator selects the same records as the server", arguments: Backend.available)
    func evaluatorAgrees(backend: Backend) async throws {
        let table = uniqueTableName("literals")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            var stored: [JSONValue] = []
            for record in Self.records {
                let reply = try await client.send(.post, "/tables/\(table)", json: record)
                stored.append(try reply.json)
            }
            for (filter, expected) in Self.cases {
                let parsed = try FilterParser.parse(filter)
                let local = Set(
                    stored.filter { FilterEvaluator.matches(parsed, record: $0) }.compactMap { $0["id"]?.stringValue })
                #expect(local == expected, "evaluator: \(filter)")
            }
        }
    }

    /// Query_Tests.cs, Query_Test_022 (`month(releaseDate) eq 11`) and the other date functions, on release dates
    /// stored without a time, as a .NET `DateOnly` is written: the same day on both databases and in the evaluator.
    @Test(
        "Query_Tests.cs Query_Test_022: year(), month() and day() of dates without a time", arguments: Backend.available
    )
    func dateFunctionsOfDatesWithoutTime(backend: Backend) async throws {
        let table = uniqueTableName("dateonly")
        let records: [JSONValue] = [
            ["id": "a", "releaseDate": "1994-11-14"], ["id": "b", "releaseDate": "1999-11-30T23:00:00.000Z"],
            ["id": "c", "releaseDate": "2001-03-01"], ["id": "d", "releaseDate": "1994-11"]
        ]
        let cases: [(String, Set<String>)] = [
            ("month(releaseDate) eq 11", ["a", "b"]), ("year(releaseDate) eq 1994", ["a"]),
            ("day(releaseDate) eq 1", ["c"]), ("hour(releaseDate) eq 0", ["a", "c"]),
            ("year(releaseDate) lt 2000 and day(releaseDate) gt 13", ["a", "b"])
        ]
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            var stored: [JSONValue] = []
            for record in records {
                let reply = try await client.send(.post, "/tables/\(table)", json: record)
                try #require(reply.status == .created)
                stored.append(try reply.json)
            }
            for (filter, expected) in cases {
                let reply = try await client.send(
                    .get, "/tables/\(table)?$filter=\(TablePath.percentEncodeQueryComponent(filter))")
                #expect(reply.status == .ok, "\(backend): \(filter): \(reply.errorMessage ?? "")")
                let selected = Set(try reply.json["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
                #expect(selected == expected, "\(backend): \(filter)")
                let parsed = try FilterParser.parse(filter)
                let local = Set(
                    stored.filter { FilterEvaluator.matches(parsed, record: $0) }.compactMap { $0["id"]?.stringValue })
                #expect(local == expected, "evaluator: \(filter)")
            }
        }
    }
}
