import HummingbirdTesting
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// A declared `dateonly` column (issue 45, item 4): the dates without a time that Datasync's clients send for .NET's
/// `DateOnly`, stored and answered as written and queried with Datasync's literals, over HTTP on every backend.
@Suite("Declared dateonly columns")
struct DateOnlyColumnTests {
    /// Read_Tests.cs, Read_SerializationTests and Read_CanRoundtripTypes: `dateOnlyValue` 2023-12-15 is answered
    /// as "2023-12-15"; Query_Tests.cs Query_Test_030 and Query_Test_022 query such a column.
    @Test(
        "Read_Tests.cs Read_SerializationTests: a dateonly column takes and answers 2023-12-15, and is queried",
        arguments: Backend.available)
    func roundTripsAndQueries(backend: Backend) async throws {
        let table = uniqueTableName("sink")
        let options = try TableOptions.parse("\(table):columns=title:string;dateOnlyValue:dateonly")
        try await withServer(backend, tables: [options], setup: .live) { client in
            let created = try await client.send(
                .post, "/tables/\(table)", json: ["id": "k1", "title": "a", "dateOnlyValue": "2023-12-15"])
            #expect(created.status == .created, "\(created.errorMessage ?? "")")
            #expect(try created.json["dateOnlyValue"] == "2023-12-15")
            let read = try await client.send(.get, "/tables/\(table)/k1")
            #expect(try read.json["dateOnlyValue"] == "2023-12-15")
            for (id, date) in [("k2", "1994-10-14"), ("k3", "2024-02-29")] {
                let reply = try await client.send(
                    .post, "/tables/\(table)", json: ["id": .string(id), "dateOnlyValue": .string(date)])
                try #require(reply.status == .created)
            }
            for refused in ["2023-02-29", "2023-12-15T00:00:00Z", "15/12/2023"] {
                let reply = try await client.send(
                    .post, "/tables/\(table)", json: ["id": "bad", "dateOnlyValue": .string(refused)])
                #expect(reply.status == .badRequest, "\(refused)")
                #expect(reply.errorMessage?.contains("a date without a time such as 2024-05-01") == true)
            }
            let cases: [(String, [String])] = [
                ("dateOnlyValue eq cast(1994-10-14,Edm.Date)", ["k2"]), ("dateOnlyValue ge 2023-12-15", ["k1", "k3"]),
                ("dateOnlyValue ne 2023-12-15", ["k2", "k3"]), ("month(dateOnlyValue) eq 12", ["k1"]),
                ("year(dateOnlyValue) lt 2000", ["k2"]), ("dateOnlyValue in (2024-02-29, 1994-10-14)", ["k2", "k3"])
            ]
            for (filter, expected) in cases {
                let reply = try await client.send(
                    .get,
                    "/tables/\(table)?$orderby=dateOnlyValue&$filter=\(TablePath.percentEncodeQueryComponent(filter))")
                #expect(reply.status == .ok, "\(backend): \(filter): \(reply.errorMessage ?? "")")
                let ids = try reply.json["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
                #expect(Set(ids) == Set(expected), "\(backend): \(filter)")
            }
            let ordered = try await client.send(.get, "/tables/\(table)?$orderby=dateOnlyValue%20desc")
            #expect(try ordered.json["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["k3", "k1", "k2"])
        }
        try await forgetDeclaredColumns(backend, tables: [table])
    }
}
