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
}
