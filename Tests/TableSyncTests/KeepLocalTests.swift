import SyncProtocol
import Testing

@testable import TableSync
@testable import TableSyncStorage

/// Keeping the local side of a version conflict (`tablesync resolve --keep-local`) as a pure rule: what the pending
/// operation becomes for each server copy, with and without local content.
@Suite struct KeepLocalTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        /// The conflict's local content: the record file's, or `nil` for a delete.
        let local: [String: JSONValue]?
        /// The server's copy, or `nil` when the server has none.
        let server: [String: JSONValue]?
        /// The operation that goes out: its kind, base version and whether it brings the record back; `nil` when
        /// nothing is left to send.
        let expected: (kind: PendingOperation.Kind, baseVersion: String?, undelete: Bool)?
        var testDescription: String { name }
    }

    static let content: [String: JSONValue] = ["id": "a", "text": "mine"]

    static let cases: [Case] = [
        Case(
            name: "an edit over a live copy: an update on its version", local: content,
            server: ["id": "a", "version": "v2", "text": "theirs"], expected: (.update, "v2", false)),
        Case(
            name: "a delete over a live copy: a delete on its version", local: nil,
            server: ["id": "a", "version": "v2", "text": "theirs"], expected: (.delete, "v2", false)),
        Case(
            name: "an edit the server has no record for: an insert", local: content, server: nil,
            expected: (.insert, nil, false)),
        Case(
            name: "an edit over a deleted copy: brought back on its version, then updated", local: content,
            server: ["id": "a", "version": "v3", "deleted": true], expected: (.update, "v3", true)),
        Case(
            name: "a delete over a deleted copy: nothing left to send", local: nil,
            server: ["id": "a", "version": "v3", "deleted": true], expected: nil)
    ]

    @Test("the operation that goes out", arguments: cases)
    func keptOperation(_ example: Case) throws {
        let queued = PendingOperation(
            sequence: 4, kind: example.local == nil ? .delete : .update, table: "todo", id: "a", baseVersion: "v1",
            item: example.local.map { .object($0) })
        let server = try example.server.map { try ServerRecord($0) }
        let conflict = ConflictRecord(
            operation: queued, local: example.local, server: server, status: 412, reason: "version mismatch")
        let kept = try conflict.keepingLocal(queued, server: server)
        #expect(kept?.kind == example.expected?.kind)
        #expect(kept?.baseVersion == example.expected?.baseVersion)
        #expect(kept?.undelete == example.expected?.undelete)
        #expect(kept.map { $0.sequence == queued.sequence && $0.key == queued.key } ?? true)
        if let kept, kept.kind != .delete { #expect(kept.item == nil, "the content is read from the file when sent") }
    }

    @Test("an edit over a copy the server keeps deleted without a version is refused, naming the record")
    func deletedWithoutVersion() throws {
        let queued = PendingOperation(
            sequence: 1, kind: .update, table: "todo", id: "a", baseVersion: "v1", item: .object(Self.content))
        let server = try ServerRecord(["id": "a", "deleted": true])
        let conflict = ConflictRecord(
            operation: queued, local: Self.content, server: server, status: 412, reason: "version mismatch")
        #expect {
            _ = try conflict.keepingLocal(queued, server: server)
        } throws: { error in
            guard case StoreError.operationRejected(let table, let id, let reason) = error else { return false }
            return table == "todo" && id == "a" && reason.contains("without a version to bring it back on")
        }
    }
}
