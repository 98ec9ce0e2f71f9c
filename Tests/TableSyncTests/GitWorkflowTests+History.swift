import Foundation
import SyncProtocol
import Testing
import TestSupport

/// Old content that git puts back after the server has seen it: played with the real `git` and the real `tablesync`
/// against a live server, as ``GitWorkflowTests`` does. What the server already applied is history, never an edit
/// over newer data nor a conflict with it.
extension GitWorkflowTests {
    /// Stands for a person who created a record by hand, committed and synced it, and later reset the branch to that
    /// commit while a teammate had changed the record.
    @Test(
        """
        git reset --hard to the commit that created a record by hand, then sync --allow-older-head: the teammate's \
        newer value stays on the server, with no conflict
        """
    )
    func resetToARecordsCreation() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 2)
        try world.write("a", "new", #"{"id": "new", "text": "created by hand"}"#)
        try await world.git("a", "add", "store/tables/todo/new.json")
        try await world.git("a", "commit", "-q", "-m", "a record made by hand")
        let creation = try await world.head("a")
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0, "inserts it")
        try await world.otherUser()
        try world.edit("other", "new", ["text": "a teammate's newer words"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0, "pulls the teammate's change")
        let server = try await world.serverRows()

        try await world.git("a", "reset", "-q", "--hard", creation)
        #expect(try world.record("a", "new")?["version"] == nil, "git put back the file as it was created")
        let sync = try await world.tablesyncJSON("a", "sync", "--allow-older-head")
        #expect(sync["push"]?["applied"] == 0, "\(sync)")
        #expect(sync["push"]?["conflicts"] == [], "no conflict: \(sync)")
        #expect(try await world.serverRows() == server, "the teammate's value stays")
        #expect(try world.record("a", "new")?["text"] == "a teammate's newer words", "the file is brought up to date")
        await world.stop()
    }

    /// Stands for a person whose edit was committed and synced, then brought back: by a reset to the commit that
    /// held it, or by `git restore` after a sync that was not committed, while a teammate changed another property;
    /// and the same restore followed by `rm -rf .tablesync`, where only git's history says what the server saw.
    @Test(
        """
        an edit already sent, brought back by git reset or git restore (also after rm -rf .tablesync) while a \
        teammate changed the record: no conflict, nothing sent again, the teammate's change kept
        """,
        arguments: ["reset", "restore", "restore without .tablesync"])
    func sentEditBroughtBack(how: String) async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        try world.edit("a", "r2", ["text": "my edit"])
        try await world.git("a", "commit", "-q", "-am", "an edit by hand")
        let edited = try await world.head("a")
        #expect(try await world.tablesync("a", "sync", how == "reset" ? "--commit" : "--no-commit").status == 0)
        #expect(try await world.serverRows()["r2"]?["text"] == "my edit", "sent once")
        try await world.otherUser()
        try world.edit("other", "r2", ["done": true])
        #expect(try await world.tablesync("other", "sync").status == 0)
        if how == "reset" {
            #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
            try await world.git("a", "reset", "-q", "--hard", edited)
        } else {
            try await world.git("a", "restore", "store/")
        }
        if how == "restore without .tablesync" {
            try FileManager.default.removeItem(atPath: world.path("a/store/.tablesync"))
        }
        let server = try await world.serverRows()
        #expect(server["r2"]?["done"] == true && server["r2"]?["text"] == "my edit")

        let sync = try await world.tablesyncJSON("a", "sync", "--allow-older-head")
        #expect(sync["push"]?["applied"] == 0, "nothing sent again: \(sync)")
        #expect(sync["push"]?["conflicts"] == [], "no false conflict: \(sync)")
        #expect(try await world.serverRows() == server)
        #expect(try world.record("a", "r2")?["done"] == true, "the file holds the teammate's change too")
        await world.stop()
    }

    /// Stands for a person who cherry-picks another branch's sync commit onto a branch that never had the hand edit
    /// that sync sent: the commit's parent holds the edit, main holds the server's older copy, and both sides of the
    /// pick are the server's copies.
    @Test("cherry-pick onto main of another branch's sync commit: the other branch's edit stays on the server")
    func cherryPickOfASyncCommitAcrossBranches() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 8)
        try await world.git("a", "switch", "-q", "-c", "old")
        try world.edit("a", "r8", ["text": "old8"])
        try await world.git("a", "commit", "-q", "-am", "a hand edit on old")
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0, "sends the edit")
        let syncCommit = try await world.head("a")
        let server = try await world.serverRows()
        #expect(server["r8"]?["text"] == "old8")

        try await world.git("a", "switch", "-q", "main")
        try await world.git("a", "cherry-pick", syncCommit)
        #expect(try await world.unmerged("a").isEmpty, "the pick is clean")
        #expect(
            try world.record("a", "r8")?["version"] != server["r8"]?["version"],
            "the merge keeps main's older copy whole, not its text under the newer version")
        let sync = try await world.tablesyncJSON("a", "sync", "--allow-older-head")
        #expect(sync["push"]?["applied"] == 0, "nothing sent: \(sync)")
        #expect(try await world.serverRows() == server, "old8 stays on the server")
        #expect(try world.record("a", "r8")?["text"] == "old8", "and the file is brought up to date")
        await world.stop()
    }
}
