import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

@Suite struct OperationCollapseTests {
    typealias Kind = PendingOperation.Kind

    /// Every cell of the matrix: pending operation (or none) × new change → outcome.
    static let cells: [(Kind?, Kind, String)] = [
        (nil, .insert, "add"), (nil, .update, "add"), (nil, .delete, "add"),
        (.insert, .insert, "reject"), (.insert, .update, "keep"), (.insert, .delete, "drop"),
        (.update, .insert, "reject"), (.update, .update, "keep"), (.update, .delete, "replace"),
        (.delete, .insert, "reject"), (.delete, .update, "reject"), (.delete, .delete, "reject")
    ]

    @Test(arguments: cells)
    func matrix(_ pending: Kind?, _ new: Kind, _ expected: String) {
        let outcome = OperationCollapse.outcome(pending: pending, new: new)
        switch (outcome, expected) {
        case (.add, "add"), (.keepPending, "keep"), (.dropBoth, "drop"), (.replacePending, "replace"): break
        case (.reject(let reason), "reject"): #expect(!reason.isEmpty)
        default: Issue.record("\(String(describing: pending)) then \(new): expected \(expected), got \(outcome)")
        }
    }

    @Test func journalAppliesTheMatrix() throws {
        var journal = Journal()
        try journal.enqueue(.insert, table: "t", id: "a", baseVersion: nil)
        try journal.enqueue(.update, table: "t", id: "a", baseVersion: "v0")
        #expect(journal.operations.map(\.kind) == [.insert])
        try journal.enqueue(.update, table: "t", id: "b", baseVersion: "v1")
        try journal.enqueue(.update, table: "t", id: "b", baseVersion: "v2")
        #expect(journal.pending(RecordKey(table: "t", id: "b"))?.baseVersion == "v1")
        try journal.enqueue(.insert, table: "t", id: "c", baseVersion: nil)
        try journal.enqueue(.delete, table: "t", id: "b", baseVersion: "v9", item: ["id": "b"])
        let delete = try #require(journal.pending(RecordKey(table: "t", id: "b")))
        #expect(delete.kind == .delete)
        #expect(delete.baseVersion == "v1", "the delete goes out on the version the server has")
        #expect(journal.operations.map(\.id) == ["a", "c", "b"], "the replacing delete moves to the end")
        try journal.enqueue(.delete, table: "t", id: "a", baseVersion: nil)
        #expect(journal.operations.map(\.id) == ["c", "b"], "insert then delete reaches the server as nothing")
        #expect(throws: StoreError.self) { try journal.enqueue(.update, table: "t", id: "b", baseVersion: nil) }
        #expect(throws: StoreError.self) { try journal.enqueue(.insert, table: "t", id: "c", baseVersion: nil) }
    }

    /// Removing settled operations keeps the others in order and findable, wherever the removed ones are, and
    /// the saved file holds exactly what is left.
    @Test func removingOperationsKeepsTheRestInOrder() throws {
        let directory = TemporaryDirectory()
        let layout = StoreLayout(root: directory.path)
        try FileSystem.createDirectory(layout.cacheDirectory)
        var journal = Journal()
        for number in 0..<10 { try journal.enqueue(.update, table: "t", id: "r\(number)", baseVersion: "v\(number)") }
        try journal.save(layout: layout)
        let sequences = journal.operations.map(\.sequence)
        for removed in [[0, 1, 2], [3, 7], [9], [99]] {
            let before = journal.operations.map(\.id)
            let doomed = Set(
                removed.filter { $0 < sequences.count }.map { sequences[$0] } + (removed.contains(99) ? [9_999] : []))
            journal.remove(sequences: doomed)
            let expected = before.filter { id in !removed.contains { $0 < 10 && "r\($0)" == id } }
            #expect(journal.operations.map(\.id) == expected, "after removing \(removed)")
            for id in before {
                #expect(
                    (journal.pending(RecordKey(table: "t", id: id)) != nil) == expected.contains(id),
                    "\(id) after removing \(removed)")
            }
            try journal.save(layout: layout)
            #expect(try Journal.load(layout: layout).operations == journal.operations)
        }
        #expect(journal.operations.map(\.id) == ["r4", "r5", "r6", "r8"])
    }
}
