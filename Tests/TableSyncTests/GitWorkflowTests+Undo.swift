import Foundation
import SyncProtocol
import Testing
import TestSupport

/// Undo through git's history with `tablesync restore` and `tablesync revert`, played with the real `git` and the real
/// `tablesync` against a live server, as ``GitWorkflowTests`` does: old content put back on purpose is an edit on
/// the server's current version, sent with `If-Match`, a conflict where the server moved since.
extension GitWorkflowTests {
    /// Stands for the usual cron set-up (`sync --commit` after every hand edit), where a person finds a bad edit in
    /// the history and reverts the sync commit that sent it; on one record a teammate changed the server meanwhile.
    @Test(
        """
        tablesync revert of the sync commit that sent bad hand edits: the old content goes back to the server, and a \
        record a teammate changed since is a conflict showing both sides
        """
    )
    func revertOfASyncCommit() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        try world.edit("a", "r1", ["text": "a bad edit"])
        try world.edit("a", "r2", ["text": "another bad edit"])
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        let bad = try await world.head("a")
        #expect(try await world.serverRows()["r1"]?["text"] == "a bad edit")
        try await world.otherUser()
        try world.edit("other", "r2", ["done": true])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0, "a pulls the teammate's change")

        let revert = try await world.tablesyncJSON("a", "revert", bad)
        #expect(revert["updated"] == ["todo/r1", "todo/r2"], "\(revert)")
        #expect(try world.record("a", "r1")?["text"] == "item 1", "the file holds the old content")
        let status = try await world.tablesyncJSON("a", "status")
        #expect(status["pending"]?.arrayValue?.count == 2, "status shows what the revert queued: \(status)")
        let sync = try await world.tablesync("a", "sync", "--commit")
        #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
        let rows = try await world.serverRows()
        #expect(rows["r1"]?["text"] == "item 1", "the old content is on the server")
        #expect(rows["r2"]?["text"] == "item 2" && rows["r2"]?["done"] == true, "over the teammate's newer version")
        #expect(try world.record("a", "r1")?["text"] == "item 1", "and stays in the file")

        // A second undo, of the undo, while the teammate changes r1 again: now the server moved past the content
        // being replaced, which is a conflict, not an overwrite.
        let undo = try await world.head("a")
        #expect(try await world.tablesync("other", "sync").status == 0, "the teammate pulls the undo")
        try world.edit("other", "r1", ["text": "the teammate's words"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesyncJSON("a", "revert", undo)["updated"] == ["todo/r1", "todo/r2"])
        let late = try await world.tablesync("a", "sync")
        #expect(late.status == 3, "r1 meets the teammate's change: \(late.stdout) \(late.stderr)")
        #expect(try await world.serverRows()["r1"]?["text"] == "the teammate's words", "not overwritten")
        #expect(try await world.serverRows()["r2"]?["text"] == "another bad edit", "r2 had not moved: sent")
        let conflicts = try await world.tablesync("a", "conflicts")
        #expect(
            conflicts.stdout.contains("the teammate's words") && conflicts.stdout.contains("a bad edit"),
            "both sides shown: \(conflicts.stdout)")
        await world.stop()
    }

    /// Stands for bringing one record back to last week's content, and one deleted since back to life.
    @Test(
        """
        tablesync restore --source: a record gets an older commit's content on the server's current version, a \
        record deleted since comes back, and one created since is deleted
        """
    )
    func restoreFromAnOlderCommit() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        let week = try await world.head("a")
        try world.edit("a", "r1", ["text": "changed later"])
        try FileManager.default.removeItem(atPath: world.path("a/store/tables/todo/r3.json"))
        try world.write("a", "n1", #"{"id": "n1", "text": "created later"}"#)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        #expect(try await world.liveServerRows()["r3"] == nil)

        let restore = try await world.tablesyncJSON(
            "a", "restore", "todo/r1", "todo/r3", "todo/n1", "todo/r2", "--source", week)
        #expect(restore["updated"] == ["todo/r1"] && restore["inserted"] == ["todo/r3"], "\(restore)")
        #expect(restore["deleted"] == ["todo/n1"] && restore["unchanged"] == ["todo/r2"], "\(restore)")
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        let rows = try await world.liveServerRows()
        #expect(rows["r1"]?["text"] == "item 1" && rows["r3"]?["text"] == "item 3" && rows["n1"] == nil, "\(rows)")
        #expect(try await world.porcelain("a").isEmpty, "the sync committed the restored files")

        let unknown = try await world.tablesync("a", "restore", "todo/r1", "--source", "no-such-commit")
        #expect(unknown.status == 2 && unknown.stderr.contains("no-such-commit"), "\(unknown.stderr)")
        await world.stop()
    }

    /// Stands for undoing a commit that created records by hand after they were synced: they are deleted, and the
    /// mass-delete brake holds when that would be most of the table.
    @Test("tablesync revert of a commit that created records deletes them on the server, through the mass-delete brake")
    func revertOfACreation() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 4)
        for number in 1...6 { try world.write("a", "n\(number)", #"{"id": "n\#(number)", "text": "new"}"#) }
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        let creation = try await world.head("a")
        let braked = try await world.tablesync("a", "revert", creation)
        #expect(braked.status != 0 && braked.stderr.contains("--allow-mass-delete"), "\(braked.stderr)")
        #expect(try await world.tablesyncJSON("a", "log")["pending"] == [], "nothing queued")
        let revert = try await world.tablesyncJSON("a", "revert", creation, "--allow-mass-delete")
        #expect(revert["deleted"]?.arrayValue?.count == 6, "\(revert)")
        #expect(try await world.tablesync("a", "sync").status == 0, "the deletes were allowed when queued")
        #expect(try await world.liveServerRows().keys.sorted() == ["r1", "r2", "r3", "r4"])
        await world.stop()
    }
}
