import SyncProtocol
@testable import TableSync
import Testing

@Suite("The property-by-property difference `conflicts` shows")
struct PropertyDifferenceTests {
    @Test("changed, added and removed properties in key order; system properties and equal values left out")
    func differences() {
        let server: [String: JSONValue] = [
            "id": "r1", "version": "v2", "updatedAt": "2026-11-28T10:00:00.000Z", "text": "buy milk", "done": true,
            "tags": ["a"]
        ]
        let local: [String: JSONValue] = [
            "id": "r1", "version": "v1", "text": "buy oat milk", "tags": ["a"], "note": .null
        ]
        #expect(
            PropertyDifference.between(server: server, local: local) == [
                PropertyDifference(name: "done", server: true, local: nil),
                PropertyDifference(name: "note", server: nil, local: .null),
                PropertyDifference(name: "text", server: "buy milk", local: "buy oat milk")
            ])
        #expect(PropertyDifference.between(server: server, local: server).isEmpty)
    }
}
