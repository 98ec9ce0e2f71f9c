import SyncProtocol
import Testing

@testable import TableSync

/// The rule `tablesync revert` applies to each record, alone.
@Suite struct RecordRevertTests {
    let before: [String: JSONValue] = ["id": "r1", "text": "old", "done": false, "version": "v1"]
    let after: [String: JSONValue] = ["id": "r1", "text": "bad", "done": false, "tag": "x", "version": "v2"]

    @Test("each property the commit changed goes back; one changed again since keeps its newer value")
    func propertiesGoBack() {
        let now: [String: JSONValue] = ["id": "r1", "text": "bad", "done": true, "tag": "x", "version": "v3"]
        #expect(
            RecordRevert.content(before: before, after: after, now: now)
                == ["id": "r1", "text": "old", "done": true, "version": "v3"],
            "text back, the added tag removed, done and the version as they are now")
        let changedAgain = now.merging(["text": "newer"]) { $1 }
        #expect(RecordRevert.content(before: before, after: after, now: changedAgain)?["text"] == "newer")
    }

    @Test("a record the commit created is removed; one it deleted comes back unless it exists again")
    func creationsAndDeletions() {
        #expect(RecordRevert.content(before: nil, after: after, now: after) == nil)
        #expect(RecordRevert.content(before: before, after: nil, now: nil) == before)
        let recreated: [String: JSONValue] = ["id": "r1", "text": "again"]
        #expect(RecordRevert.content(before: before, after: nil, now: recreated) == recreated)
        #expect(RecordRevert.content(before: before, after: after, now: nil) == nil, "deleted since: stays deleted")
    }
}
