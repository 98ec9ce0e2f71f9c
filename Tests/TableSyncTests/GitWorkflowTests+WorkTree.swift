import Foundation
import SyncProtocol
import Testing
import TestSupport

/// Files absent because git did not put them in the work tree, or is still putting them there: played with the real
/// `git` and the real `tablesync` against a live server, as ``GitWorkflowTests`` does.
extension GitWorkflowTests {
    /// Stands for a team member who checks out only part of a large store (`git sparse-checkout`).
    @Test(
        """
        a sparse checkout that leaves record files out: neither a clone's first sync nor a later one deletes them on \
        the server
        """
    )
    func sparseCheckoutDeletesNothing() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 6)
        let server = try await world.serverRows()

        try await world.git(".", "clone", "-q", "--no-checkout", "a", "b")
        try await world.git("b", "sparse-checkout", "set", "--no-cone", "/*", "!/store/tables/todo/r2.json")
        try await world.git("b", "checkout", "-q", "main")
        #expect(try world.record("b", "r2") == nil, "git left r2 out")
        #expect(try await world.tablesync("b", "git-setup").status == 0)
        let first = try await world.tablesync("b", "sync")
        #expect(first.status == 0, "\(first.stdout) \(first.stderr)")
        #expect(try await world.liveServerRows().count == 6, "nothing deleted by the first sync")

        try await world.git("b", "sparse-checkout", "set", "--no-cone", "/*", "!/store/tables/todo/r3.json")
        let later = try await world.tablesyncJSON("b", "sync")
        #expect(later["push"]?["applied"] == 0, "\(later)")
        #expect(try await world.serverRows() == server, "nothing deleted or changed on the server")
        await world.stop()
    }

    /// Stands for a `tablesync sync` (cron, or a watch's run) that starts while a `git checkout` of many files is
    /// still removing them: git holds `.git/index.lock` until it has written the work tree and the index. A real
    /// checkout cannot be paused at that point, so the lock and the files it removed so far are made by hand.
    @Test("a sync while git holds index.lock (a checkout under way) is refused, sends nothing, and goes once it ends")
    func syncDuringACheckout() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 6)
        let server = try await world.serverRows()
        let lock = world.path("a/.git/index.lock")
        #expect(FileManager.default.createFile(atPath: lock, contents: Data()))
        for number in 1...4 {
            try FileManager.default.removeItem(atPath: world.path("a/store/tables/todo/r\(number).json"))
        }

        let refused = try await world.tablesync("a", "sync", "--commit")
        #expect(refused.status == 9, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("index.lock"), "\(refused.stderr)")
        #expect(try await world.serverRows() == server, "no delete was sent")
        let status = try await world.tablesyncJSON("a", "status")
        #expect(
            status["git"]?.arrayValue?.contains { $0.stringValue?.contains("index.lock") == true } == true,
            "status says so: \(status)")

        // The checkout ends: here it is undone, so the work tree is HEAD's again.
        try FileManager.default.removeItem(atPath: lock)
        try await world.git("a", "checkout", "-q", "--", "store/tables/todo")
        let after = try await world.tablesyncJSON("a", "sync")
        #expect(after["push"]?["applied"] == 0, "\(after)")
        #expect(try await world.serverRows() == server)
        await world.stop()
    }

    /// Stands for a feature branch that removed a record with a committed `git rm` while main went on syncing: the
    /// branch's delete is as much its own change as its edits, while a record main created after the fork is one the
    /// branch merely lacks.
    @Test(
        """
        git switch to a branch whose own commit removed a record: the delete is sent; a record created on main since \
        the fork is brought back, not deleted
        """
    )
    func branchCommittedDeleteIsSent() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 4)
        try await world.otherUser()
        try await world.git("a", "switch", "-q", "-c", "feat")
        try await world.git("a", "rm", "-q", "store/tables/todo/r3.json")
        try await world.git("a", "commit", "-q", "-m", "remove r3")
        try await world.git("a", "switch", "-q", "main")
        try world.write("other", "r9", #"{"id": "r9", "text": "created on the server after the fork"}"#)
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0, "main syncs meanwhile")

        try await world.git("a", "switch", "-q", "feat")
        let sync = try await world.tablesyncJSON("a", "sync")
        #expect(sync["push"]?["applied"] == 1, "the branch's delete went out: \(sync)")
        let live = try await world.liveServerRows()
        #expect(live["r3"] == nil, "r3 is deleted on the server")
        #expect(live["r9"] != nil, "r9, which the branch merely lacks, is not")
        #expect(try world.record("a", "r9") != nil, "and its file is brought back")
        #expect(try world.record("a", "r3") == nil, "r3 stays removed")
        await world.stop()
    }

    /// Stands for a person who renames a record file with `git mv`, as if the name were theirs to choose.
    @Test("git mv of a record file to another name: no delete is sent, and the renamed file is reported with the fix")
    func gitMoveOfARecordFile() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        let server = try await world.serverRows()
        try await world.git("a", "mv", "store/tables/todo/r3.json", "store/tables/todo/renamed.json")
        let sync = try await world.tablesync("a", "sync")
        #expect(sync.status == 7, "the misnamed file is reported: \(sync.stdout) \(sync.stderr)")
        #expect(try await world.serverRows() == server, "r3 was not deleted")
        let status = try await world.tablesyncJSON("a", "status", status: 7)
        let reasons = (status["problems"]?.arrayValue ?? []).compactMap { $0["reason"]?.stringValue }
        #expect(reasons.contains { $0.contains("r3.json") && $0.contains("no delete") }, "\(reasons)")
        #expect(status["handEdits"] == [], "no delete waits either: \(status)")
        await world.stop()
    }
}
