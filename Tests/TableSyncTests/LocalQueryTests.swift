import SyncProtocol
import Testing

@testable import TableSync

@Suite("Local queries")
struct LocalQueryTests {
    @Test("the properties a query names that no record holds: each once, system properties and held ones left out")
    func unknownPropertyNames() throws {
        let records: [[String: JSONValue]] = [["id": "a", "complete": false], ["id": "b", "text": "x"]]
        let query = try LocalQuery(
            filter: "complete eq flase and (text eq flase or deleted eq false) and version ne null",
            orderBy: "rank desc")
        #expect(query.unknownPropertyNames(in: records) == ["flase", "rank"])
        #expect(query.unknownPropertyNames(in: []) == [], "an empty table is no evidence")
        #expect(try LocalQuery(filter: "text eq 'flase'", orderBy: nil).unknownPropertyNames(in: records) == [])
    }

    /// `tablesync query` reads Datasync's literals as the server does (issue 45, item 3; DatasyncLiteralTests holds
    /// the server's side): a date matches dates and the day of date-times, a guid any case.
    @Test("a local query takes Datasync's date, time-of-day and guid literals")
    func datasyncLiterals() throws {
        let records: [[String: JSONValue]] = [
            ["id": "a", "due": "1994-10-14", "at": "12:24:00", "owner": "29386779-34B1-464A-BB5B-4053C2EE61B3"],
            ["id": "b", "due": "1994-10-14T23:00:00.000Z", "at": "09:00:00"],
            ["id": "c", "due": "1999-12-31"]
        ]
        func ids(_ filter: String) throws -> [String] {
            try LocalQuery(filter: filter, orderBy: "id").apply(to: records).compactMap { $0["id"]?.stringValue }
        }
        #expect(try ids("due eq cast(1994-10-14,Edm.Date)") == ["a", "b"])
        #expect(try ids("due gt 1994-10-14") == ["c"])
        #expect(try ids("at lt cast(12:00:00,Edm.TimeOfDay)") == ["b"])
        #expect(try ids("owner eq cast(29386779-34b1-464a-bb5b-4053c2ee61b3,Edm.Guid)") == ["a"])
    }
}
