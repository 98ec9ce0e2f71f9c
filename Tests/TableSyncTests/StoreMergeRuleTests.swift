import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// The pure rules of stores kept in git: how a file this store did not sync is settled against the server's copy
/// (``AdoptionRule``), and how git's merge driver joins record files and `queries.json`.
@Suite struct StoreMergeRuleTests {
    static func record(_ version: String, at millisecond: Int, _ properties: [String: JSONValue]) -> [String: JSONValue]
    {
        var record = properties
        record["id"] = "r1"
        record["version"] = .string(version)
        record["updatedAt"] = .string("2026-01-01T00:00:00.\(String(format: "%03d", millisecond))Z")
        record["createdAt"] = "2026-01-01T00:00:00.000Z"
        return record
    }

    // MARK: - Adoption

    @Test("a file compared with the server: every case of the rule, for a stamped intact copy and for a changed file")
    func adoptionRule() throws {
        let v1 = Self.record("v1", at: 1, ["text": "a"])
        let v1Edited = Self.record("v1", at: 1, ["text": "mine"])
        let v2 = Self.record("v2", at: 2, ["text": "b"])
        var deleted = Self.record("v3", at: 3, ["text": "a"])
        deleted["deleted"] = true
        let server1 = try ServerRecord(v1)
        let server2 = try ServerRecord(v2)
        let serverDeleted = try ServerRecord(deleted)
        let server2SameContent = try ServerRecord(Self.record("v2", at: 2, ["text": "a"]))
        typealias Rule = AdoptionRule
        // A file that is not vouched for by its mark (an earlier version's file, or one changed by hand).
        #expect(Rule.decide(local: v1, intact: false, server: nil) == .created)
        #expect(Rule.decide(local: v1, intact: false, server: server1) == .unchanged(server1))
        #expect(Rule.decide(local: v1Edited, intact: false, server: server1) == .edited(baseVersion: "v1"))
        #expect(Rule.decide(local: v1, intact: false, server: server2SameContent) == .takeServer(server2SameContent))
        #expect(
            Rule.decide(local: v1, intact: false, server: server2) == .conflict(server2),
            "an old copy or a hand edit: only a person can tell")
        #expect(Rule.decide(local: v1, intact: false, server: serverDeleted) == .removeLocal)
        #expect(Rule.decide(local: v1Edited, intact: false, server: serverDeleted) == .conflict(serverDeleted))
        // A stamped, intact copy is the server's at its version: never an edit, whatever the server has now.
        #expect(
            Rule.decide(local: v1, intact: true, server: server2) == .takeServer(server2),
            "an old copy (a checkout, a restore, a revert)")
        #expect(Rule.decide(local: v1, intact: true, server: server1) == .unchanged(server1))
        #expect(
            Rule.decide(local: v2, intact: true, server: server2) == .unchanged(server2),
            "a merge brought the server's current copy")
        #expect(Rule.decide(local: v1, intact: true, server: serverDeleted) == .removeLocal)
        #expect(
            Rule.decide(local: v1, intact: true, server: nil) == .keepAsIs(server1),
            "the server lost it: kept, not inserted")
        // What the server already applied, put back on an older version: history, never an edit nor a conflict.
        #expect(
            Rule.decide(local: v1Edited, intact: false, server: server2, alreadyApplied: true) == .takeServer(server2),
            "an edit sent long ago, restored or reset to")
        #expect(
            Rule.decide(local: v1Edited, intact: false, server: serverDeleted, alreadyApplied: true) == .removeLocal)
        #expect(
            Rule.decide(local: v1Edited, intact: false, server: server1, alreadyApplied: true)
                == .edited(baseVersion: "v1"),
            "on the server's own version it is the file's content that counts: an edit")
        // A file without a version for a record synced since: a copy of its creation, or an edit on what was synced.
        let created: [String: JSONValue] = ["id": "r1", "text": "created by hand"]
        #expect(
            Rule.decide(local: created, intact: false, server: server2, alreadyApplied: true, syncedVersion: "v2")
                == .takeServer(server2),
            "the creation sent before, put back by a reset: the server's value stays")
        #expect(
            Rule.decide(local: created, intact: false, server: server2, syncedVersion: "v2")
                == .edited(baseVersion: "v2"),
            "new content written without system properties: an edit on the synced version")
        #expect(
            Rule.decide(local: created, intact: false, server: server2, syncedVersion: "v1") == .conflict(server2),
            "and one on a version the server moved on from: a conflict")
    }

    @Test(
        "an edit on an older version whose every change the server holds (git's history gives the base) is no conflict")
    func adoptionRuleWithTheBaseFromHistory() throws {
        let base: [String: JSONValue] = ["text": "a", "done": false]
        let edit = Self.record("v1", at: 1, ["text": "mine", "done": false])
        let teammateToo = try ServerRecord(Self.record("v3", at: 3, ["text": "mine", "done": true]))
        let overwritten = try ServerRecord(Self.record("v3", at: 3, ["text": "theirs", "done": false]))
        typealias Rule = AdoptionRule
        #expect(
            Rule.decide(local: edit, intact: false, server: teammateToo, base: base) == .takeServer(teammateToo),
            "the edit was sent; a teammate changed another property since")
        #expect(
            Rule.decide(local: edit, intact: false, server: overwritten, base: base) == .conflict(overwritten),
            "the property the edit changed holds another value now: a person decides")
        #expect(Rule.decide(local: edit, intact: false, server: teammateToo) == .conflict(teammateToo), "no base")
        #expect(Rule.serverHolds(changesOf: ["a": 1], from: ["a": 1, "b": 2], server: ["a": 1]), "a removal held")
        #expect(!Rule.serverHolds(changesOf: ["a": 1], from: ["a": 1, "b": 2], server: ["a": 1, "b": 2]))
        #expect(Rule.serverHolds(changesOf: ["a": 1], from: ["a": 1], server: ["a": 1, "c": 3]), "no change at all")
    }

    @Test(
        "a file a git command removed: a delete only after history the last sync led to, and only on the synced version"
    )
    func removalRule() throws {
        let v1 = try ServerRecord(Self.record("v1", at: 1, ["text": "a"]))
        let v2Record = Self.record("v2", at: 2, ["text": "b"])
        let v2 = try ServerRecord(v2Record)
        var deletedRecord = v2Record
        deletedRecord["deleted"] = true
        let deleted = try ServerRecord(deletedRecord)
        typealias Rule = AdoptionRule
        for position in [HeadPosition.atOrAfter, .unknown, .elsewhere, .behind] {
            #expect(Rule.decideRemoval(server: nil, syncedVersion: "v1", position: position) == .forget)
            #expect(
                Rule.decideRemoval(server: deleted, syncedVersion: "v1", position: position) == .forget,
                "deleted on the server too")
        }
        #expect(
            Rule.decideRemoval(server: v1, syncedVersion: "v1", position: .atOrAfter) == .delete(baseVersion: "v1"),
            "a merged delete, a git rm committed")
        #expect(Rule.decideRemoval(server: v1, syncedVersion: "v1", position: .unknown) == .delete(baseVersion: "v1"))
        #expect(
            Rule.decideRemoval(server: v2, syncedVersion: "v1", position: .atOrAfter) == .conflict,
            "changed on the server since")
        #expect(
            Rule.decideRemoval(server: v1, syncedVersion: "v1", position: .elsewhere) == .restore(v1),
            "a switch to a branch that lacks it")
        #expect(
            Rule.decideRemoval(server: v2, syncedVersion: "v1", position: .behind) == .restore(v2),
            "an older HEAD allowed on purpose")
    }

    // MARK: - Record files

    @Test(
        """
        a change that only stamps the base's content (a cherry-pick of a sync commit) over an intact older copy: that \
        copy stays whole, not its content under the newer version
        """
    )
    func stampOnlyChangeOverAnIntactCopy() throws {
        let handEdit = Self.record("v1", at: 1, ["text": "old8"])
        let olderCopy = try #require(
            try JSONParser.parse(SyncedMark.stamped(Self.record("v1", at: 1, ["text": "item 8"]))).objectValue)
        let stampedEdit = try #require(
            try JSONParser.parse(SyncedMark.stamped(Self.record("v2", at: 2, ["text": "old8"]))).objectValue)
        let merged = RecordMerge.merge(base: handEdit, ours: olderCopy, theirs: stampedEdit, oursIntact: true)
        #expect(merged.conflicts.isEmpty)
        #expect(merged.ours == olderCopy, "kept whole: the next sync brings it up to date")
        let unvouched = RecordMerge.merge(base: handEdit, ours: olderCopy, theirs: stampedEdit)
        #expect(
            unvouched.ours["text"] == "item 8" && unvouched.ours["version"] == "v2",
            "what the rule guards against: the older text under the newer version, an edit")
        // A change of content (a revert of a synced hand edit) is laid over an intact copy as before.
        let parent = try #require(
            try JSONParser.parse(SyncedMark.stamped(Self.record("v1", at: 1, ["text": "item 8"]))).objectValue)
        let reverted = RecordMerge.merge(base: handEdit, ours: stampedEdit, theirs: parent, oursIntact: true)
        #expect(reverted.ours["text"] == "item 8" && reverted.ours["version"] == "v2", "the reversal, an edit on v2")
    }

    @Test("two server copies: the newer wins, property by property, with its system properties")
    func recordMergeOfTwoServerCopies() {
        let base = Self.record("v1", at: 1, ["text": "a", "done": false, "rank": 1])
        let ours = Self.record("v2", at: 2, ["text": "b", "done": false, "rank": 1])
        let theirs = Self.record("v3", at: 3, ["text": "c", "done": true, "rank": 1])
        let merged = RecordMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(merged.conflicts.isEmpty)
        #expect(merged.ours == theirs, "the newer copy is the server's later state")
        let reversed = RecordMerge.merge(base: base, ours: theirs, theirs: ours)
        #expect(reversed.ours == theirs, "the same whichever side is ours")
        let added = RecordMerge.merge(base: nil, ours: ours, theirs: theirs)
        #expect(added.ours == theirs, "a record both sides pulled new")
    }

    @Test("a server copy and a hand edit join; both sides editing one property by hand is a conflict")
    func recordMergeWithHandEdits() {
        let base = Self.record("v1", at: 1, ["text": "a", "done": false])
        let handEdited = Self.record("v1", at: 1, ["text": "a", "done": true])
        let pulled = Self.record("v2", at: 2, ["text": "b", "done": false])
        let joined = RecordMerge.merge(base: base, ours: handEdited, theirs: pulled)
        #expect(joined.conflicts.isEmpty)
        #expect(
            joined.ours == Self.record("v2", at: 2, ["text": "b", "done": true]), "the edit on top of the newer copy")
        let mine = Self.record("v1", at: 1, ["text": "mine", "done": false])
        let yours = Self.record("v1", at: 1, ["text": "yours", "done": false])
        let clash = RecordMerge.merge(base: base, ours: mine, theirs: yours)
        #expect(clash.conflicts == ["text"])
        #expect(clash.ours["text"] == "mine" && clash.theirs["text"] == "yours")
        let handOverPull = RecordMerge.merge(
            base: base, ours: Self.record("v1", at: 1, ["text": "mine", "done": false]), theirs: pulled)
        #expect(handOverPull.conflicts == ["text"], "a hand edit and a server change of one property")
    }

    @Test("only the older server copy changed a property: a conflict, since it may be a hand edit made on top of it")
    func recordMergeAmbiguousOlderChange() {
        let base = Self.record("v1", at: 1, ["text": "a", "note": "x"])
        let older = Self.record("v2", at: 2, ["text": "a", "note": "edited"])
        let newer = Self.record("v3", at: 3, ["text": "b", "note": "x"])
        #expect(RecordMerge.merge(base: base, ours: older, theirs: newer).conflicts == ["note"])
    }

    @Test("the merge driver writes canonical bytes, or conflict markers that status reports with both sides")
    func driverOutput() throws {
        func bytes(_ record: [String: JSONValue]) -> [UInt8] { RecordFile.encode(record) }
        let base = Self.record("v1", at: 1, ["text": "a", "done": false])
        let clean = StoreFileMerge.merge(
            path: "store/tables/todo/r1.json", base: bytes(base),
            ours: bytes(Self.record("v1", at: 1, ["text": "a", "done": true])),
            theirs: bytes(Self.record("v2", at: 2, ["text": "b", "done": false])))
        #expect(clean.conflicts.isEmpty)
        #expect(clean.bytes == bytes(Self.record("v2", at: 2, ["text": "b", "done": true])))
        let clash = StoreFileMerge.merge(
            path: "tables/todo/r1.json", base: bytes(base),
            ours: bytes(Self.record("v1", at: 1, ["text": "mine", "done": false])),
            theirs: bytes(Self.record("v1", at: 1, ["text": "yours", "done": false])))
        #expect(clash.conflicts == ["text"])
        let text = String(decoding: clash.bytes, as: UTF8.self)
        #expect(
            text.contains("<<<<<<< ours\n  \"text\": \"mine\",\n=======\n  \"text\": \"yours\",\n>>>>>>> theirs\n"),
            "\(text)")
        guard
            case .failure(let problem) = RecordFile.check(
                bytes: clash.bytes, fileName: "r1.json", relativePath: "tables/todo/r1.json")
        else {
            Issue.record("a file with conflict markers is not a record")
            return
        }
        #expect(problem.line == 5)
        #expect(
            problem.reason.contains("ours has \"text\": \"mine\", and theirs has \"text\": \"yours\","),
            "\(problem.reason)")
        let other = StoreFileMerge.merge(
            path: "conflicts/todo/r1.json", base: Array("a\n".utf8), ours: Array("b\n".utf8), theirs: Array("c\n".utf8))
        #expect(other.conflicts == ["*"])
    }

    // MARK: - queries.json

    @Test("queries: the union, each with the older watermark; a redefinition on one side wins; on both, a conflict")
    func queriesMerge() throws {
        func query(_ id: String, filter: String? = nil, at millisecond: Int?, lastID: String? = nil) -> PullQuery {
            PullQuery(
                id: id, table: "todo", filter: filter,
                updatedAt: millisecond.map { "2026-01-01T00:00:00.\(String(format: "%03d", $0))Z" }, lastID: lastID)
        }
        let base = QueryRegistry(queries: ["all": query("all", at: 1), "gone": query("gone", at: 1)])
        let ours = QueryRegistry(queries: ["all": query("all", at: 5, lastID: "b"), "mine": query("mine", at: 2)])
        let theirs = QueryRegistry(queries: [
            "all": query("all", at: 3), "gone": query("gone", at: 4), "yours": query("yours", at: nil)
        ])
        let merged = QueriesMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(merged.conflicts.isEmpty)
        #expect(
            merged.ours.queries["all"] == query("all", at: 3),
            "the older watermark: the next pull re-reads a little, never skips")
        #expect(
            Set(merged.ours.queries.keys) == ["all", "mine", "yours"],
            "added on either side kept; removed on one side gone")
        #expect(
            QueriesMerge.isOlder(query("q", at: 3, lastID: "z"), than: query("q", at: 3)),
            "at one instant a cursor without a last id is past every id")
        let redefined = QueriesMerge.merge(
            base: base, ours: QueryRegistry(queries: ["all": query("all", filter: "done eq false", at: 9)]),
            theirs: QueryRegistry(queries: ["all": query("all", at: 2)]))
        #expect(redefined.ours.queries["all"]?.filter == "done eq false")
        let clash = QueriesMerge.merge(
            base: base, ours: QueryRegistry(queries: ["all": query("all", filter: "a eq 1", at: 1)]),
            theirs: QueryRegistry(queries: ["all": query("all", filter: "a eq 2", at: 1)]))
        #expect(clash.conflicts == ["all"])
    }
}
