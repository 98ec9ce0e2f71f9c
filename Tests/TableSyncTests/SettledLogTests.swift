import Foundation
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// The journal's settled log: a push records settled operations there between batches and rewrites
/// `journal.jsonl` once at its end; a run killed before that end still loads exactly what is pending.
@Suite struct SettledLogTests {
    /// A store's layout with a journal of `count` pending updates, saved.
    static func journal(count: Int) throws -> (TemporaryDirectory, StoreLayout, Journal) {
        let directory = TemporaryDirectory()
        let layout = StoreLayout(root: directory.path)
        try FileSystem.createDirectory(layout.cacheDirectory)
        var journal = Journal()
        for number in 0..<count {
            try journal.enqueue(.update, table: "t", id: "r\(number)", baseVersion: "v\(number)")
        }
        try journal.save(layout: layout)
        return (directory, layout, journal)
    }

    static func text(_ path: String) throws -> String { String(decoding: try FileSystem.readFile(path), as: UTF8.self) }

    static func lines(of operations: [PendingOperation]) -> String {
        operations.map { String(decoding: Journal.line($0), as: UTF8.self) }.joined()
    }

    @Test("removals saved with the rewrite deferred go to the settled log; an exact save rewrites once and drops it")
    func deferredRemovals() throws {
        let (directory, layout, original) = try Self.journal(count: 10)
        defer { withExtendedLifetime(directory) {} }
        var journal = original
        let written = try Self.text(layout.journalFile)
        let sequences = journal.operations.map(\.sequence)
        journal.remove(sequences: Set(sequences[0..<3]))
        try journal.save(layout: layout, deferringRewrite: true)
        #expect(try Self.text(layout.journalFile) == written, "the journal is not rewritten")
        #expect(try Self.text(layout.settledFile) == Self.lines(of: Array(original.operations[0..<3])))
        #expect(try Journal.load(layout: layout).operations == journal.operations)

        // New operations are still appended; later removals append to the log.
        try journal.enqueue(.insert, table: "t", id: "new", baseVersion: nil)
        journal.remove(sequences: [sequences[5]])
        try journal.save(layout: layout, deferringRewrite: true)
        #expect(try Self.text(layout.journalFile) == written + Self.lines(of: [journal.operations.last!]))
        #expect(try Journal.load(layout: layout).operations == journal.operations)
        #expect(journal.needsRewriteOnSave)

        try journal.save(layout: layout)
        #expect(try Self.text(layout.journalFile) == Self.lines(of: journal.operations))
        #expect(!FileSystem.exists(layout.settledFile))
        #expect(!journal.needsRewriteOnSave)
        #expect(try Journal.load(layout: layout).operations == journal.operations)
    }

    @Test("a push killed before its rewrite: read-only opens see exactly what is pending, a read-write open rewrites")
    func killedBeforeTheRewrite() async throws {
        let (directory, context) = try makeStore()
        defer { withExtendedLifetime(directory) {} }
        let todo = try await context.table("todo")
        for number in 0..<6 { try await todo.insert(["id": .string("r\(number)")]) }
        let layout = context.layout
        await context.close()
        // What a push's checkpoints leave when the run dies before its last save.
        var journal = try Journal.load(layout: layout)
        let pending = journal.operations
        journal.remove(sequences: Set(pending[0..<4].map(\.sequence)))
        try journal.save(layout: layout, deferringRewrite: true)
        let stale = try Self.text(layout.journalFile)

        let reader = try SyncContext(directory: layout.root, mode: .readOnly)
        #expect(await reader.pendingOperations == Array(pending[4...]))
        let status = try await reader.status()
        #expect(status.pending.map(\.id) == ["r4", "r5"])
        #expect(try Self.text(layout.journalFile) == stale, "a read-only open changes nothing")
        #expect(FileSystem.exists(layout.settledFile))

        let writer = try SyncContext(directory: layout.root)
        #expect(await writer.pendingOperations == Array(pending[4...]))
        #expect(try Self.text(layout.journalFile) == Self.lines(of: Array(pending[4...])))
        #expect(!FileSystem.exists(layout.settledFile))
    }

    @Test("a settled line takes out one identical line only: another machine's line with the same sequence stays")
    func matchesWholeLines() throws {
        let (directory, layout, original) = try Self.journal(count: 3)
        defer { withExtendedLifetime(directory) {} }
        var journal = original
        let first = original.operations[0]
        journal.remove(sequences: [first.sequence])
        try journal.save(layout: layout, deferringRewrite: true)
        // git's union merge brings a line from another clone that reuses sequence number 1 for another record.
        let theirs = #"{"id":"theirs","op":"update","seq":1,"table":"t","version":"w1"}"# + "\n"
        try FileSystem.appendAndSync(layout.journalFile, Array(theirs.utf8))
        let loaded = try Journal.load(layout: layout)
        #expect(loaded.operations.map(\.id) == ["theirs", "r1", "r2"])
        #expect(loaded.needsRewriteOnSave)
    }

    @Test("sequence numbers are not reused when every pending operation was settled before the rewrite")
    func sequencesNotReused() throws {
        let (directory, layout, original) = try Self.journal(count: 3)
        defer { withExtendedLifetime(directory) {} }
        var journal = original
        journal.remove(sequences: Set(original.operations.map(\.sequence)))
        try journal.save(layout: layout, deferringRewrite: true)
        var loaded = try Journal.load(layout: layout)
        #expect(loaded.isEmpty)
        let next = try #require(try loaded.enqueue(.insert, table: "t", id: "later", baseVersion: nil))
        #expect(next.sequence > original.operations.last!.sequence)
    }

    @Test("a torn last line of the settled log matches nothing")
    func tornSettledLine() throws {
        let (directory, layout, original) = try Self.journal(count: 3)
        defer { withExtendedLifetime(directory) {} }
        var journal = original
        journal.remove(sequences: [original.operations[0].sequence])
        try journal.save(layout: layout, deferringRewrite: true)
        let torn = Journal.line(original.operations[1]).dropLast(5)
        try FileSystem.appendAndSync(layout.settledFile, Array(torn))
        #expect(try Journal.load(layout: layout).operations == Array(original.operations[1...]))
    }
}
