import Foundation
import SyncProtocol
import Testing
import TestSupport

/// A clone's first scan with git's index standing in for the stat index it lacks (``SyncedTrees``,
/// ``GitIndexFile``), played with the real `git` and the real `tablesync` against a live server.
extension GitWorkflowTests {
    /// Stands for a teammate's first day: `git clone` of a store that a cron job keeps synced, then edits. The clone
    /// reads none of the files git vouches for, yet every edit and delete is found and sent on the right version,
    /// including those made later on files it never read.
    @Test(
        """
        a clone of a synced store reads none of the files git's index vouches for; an edit, a delete and a library \
        delete made on them later go out on the versions their blobs hold, with no conflict
        """
    )
    func cloneTakesGitsWord() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 6)
        let tree = try await world.git("a", "rev-parse", "HEAD:store/tables/todo").stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let recorded = try await world.git("a", "show", "HEAD:store/synced-trees.jsonl").stdout
        #expect(recorded == #"{"table":"todo","tree":"\#(tree)"}"# + "\n", "sync --commit commits the tree it synced")

        try await world.git(".", "clone", "-q", "a", "b")
        try await Self.refreshGitIndex(world, "b")
        let fresh = try await world.tablesyncJSON("b", "status")
        #expect(fresh["scan"]?["files"] == 6 && fresh["scan"]?["read"] == 0, "nothing read: \(fresh)")
        #expect(fresh["serverCopies"]?["todo"] == 6 && fresh["handEdits"]?.arrayValue?.isEmpty == true, "\(fresh)")

        try world.edit("b", "r1", ["text": "edited in the clone"])
        try FileManager.default.removeItem(atPath: world.path("b/store/tables/todo/r2.json"))
        let edited = try await world.tablesyncJSON("b", "status")
        #expect(edited["scan"]?["read"] == 1, "the edited file alone is read: \(edited)")
        let first = try await world.tablesyncJSON("b", "sync")
        #expect(first["push"]?["applied"] == 2 && first["push"]?["indexedCopies"] == 4, "\(first)")

        // r3 to r6 are indexed from git's word alone: their versions are in their blobs (`b` in the index's lines).
        let log = try String(contentsOfFile: world.path("b/store/.tablesync/index/todo.index"), encoding: .utf8)
        let unread = log.split(separator: "\n").filter {
            $0.split(separator: "\t", omittingEmptySubsequences: false).dropFirst(7).first == "b"
        }
        #expect(unread.count == 4, "\(log)")
        try world.edit("b", "r3", ["text": "edited later"])
        try FileManager.default.removeItem(atPath: world.path("b/store/tables/todo/r4.json"))
        #expect(try await world.tablesync("b", "delete", "todo", "r6").status == 0)
        let later = try await world.tablesyncJSON("b", "sync")
        #expect(later["push"]?["applied"] == 3, "\(later)")
        #expect(later["push"]?["conflicts"]?.arrayValue?.isEmpty ?? true, "\(later)")
        let rows = try await world.liveServerRows()
        #expect(rows.keys.sorted() == ["r1", "r3", "r5"])
        #expect(rows["r1"]?["text"] == "edited in the clone" && rows["r3"]?["text"] == "edited later")
        await world.stop()
    }

    /// Stands for a commit made with plain git over a hand edit (no sync after it), then cloned: the tree was never
    /// synced, so git's index vouches for nothing and every file is read, the edit found as before.
    @Test("a clone of a tree no sync recorded (a hand edit committed with git alone) reads every file")
    func unrecordedTreeIsRead() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 4)
        try world.edit("a", "r2", ["text": "committed without a sync"])
        try await world.git("a", "commit", "-q", "-am", "a hand edit")
        try await world.git(".", "clone", "-q", "a", "b")
        try await Self.refreshGitIndex(world, "b")
        let status = try await world.tablesyncJSON("b", "status", status: 0)
        #expect(status["scan"]?["read"] == 4, "\(status)")
        #expect(status["handEdits"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["r2"], "\(status)")
        await world.stop()
    }

    /// Stands for a clone on a machine where git converts line endings (`core.autocrlf=true`, as Git for Windows
    /// sets it): the files hold other bytes than their blobs, so git's word would not name them, and every file is
    /// read; the first sync still sends nothing.
    @Test("a clone whose files git converts on checkout (core.autocrlf) takes no word of git's: every file is read")
    func convertedCloneIsRead() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        try await world.git(".", "clone", "-q", "-c", "core.autocrlf=true", "a", "b")
        try await Self.refreshGitIndex(world, "b")
        let bytes = try #require(FileManager.default.contents(atPath: world.path("b/store/tables/todo/r1.json")))
        #expect(bytes.contains(UInt8(ascii: "\r")), "git wrote CRLF")
        let status = try await world.tablesyncJSON("b", "status")
        #expect(status["scan"]?["read"] == 3 && status["handEdits"]?.arrayValue?.isEmpty == true, "\(status)")
        let sync = try await world.tablesyncJSON("b", "sync")
        #expect(sync["push"]?["applied"] == 0, "\(sync)")
        await world.stop()
    }

    /// Lets the clock move past the clone's last file write, then has git refresh its index, as any `git status`
    /// does: entries written in the same clock tick as the index are racily clean, and vouch for nothing.
    static func refreshGitIndex(_ world: GitWorld, _ repository: String) async throws {
        try await Task.sleep(for: .milliseconds(20))
        try await world.git(repository, "status", "--porcelain")
    }
}
