import Foundation
import SyncProtocol
import Testing
import TestSupport

/// Stores kept in git, with the real `git` and the real `tablesync` against a real server: clones, a lost cache,
/// merges through the merge driver, a revert and a rebase of sync commits.
@Suite(.serialized) struct GitStoreTests {
    @Test(
        """
        a clone's first sync sends one update per file edited in the clone, nothing for the rest, and no conflict \
        where the server moved; a lost .tablesync/ sends nothing
        """
    )
    func cloneAndLostCache() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 8)
        try await world.git(".", "clone", "-q", "a", "b")
        try await world.otherUser()
        // Changes on the server after the commit: r2 edited, r4 deleted, r6 edited and edited back.
        try world.edit("other", "r2", ["text": "changed on the server"])
        try FileManager.default.removeItem(atPath: world.path("other/store/tables/todo/r4.json"))
        try world.edit("other", "r6", ["text": "briefly different"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        try world.edit("other", "r6", ["text": "item 6"])
        #expect(try await world.tablesync("other", "sync").status == 0)

        // The clone, edited before its first sync.
        try world.edit("b", "r3", ["text": "edited in the clone"])
        try world.edit("b", "r7", ["done": true])
        let status = try await world.tablesyncJSON("b", "status")
        let kinds = status["handEdits"]?.arrayValue?.compactMap { $0["change"]?.stringValue } ?? []
        #expect(kinds == ["uncompared", "uncompared"], "the two edited files, not called created by hand: \(kinds)")
        #expect(status["serverCopies"]?["todo"] == 6, "the six files stamped as the server's copies: \(status)")
        let versionsBefore = try world.records("other").mapValues { $0["version"] }

        let sync = try await world.tablesyncJSON("b", "sync")
        let push = try #require(sync["push"])
        #expect(push["applied"] == 2, "exactly the two edits are sent: \(push)")
        #expect(push["compared"]?["edited"] == 2)
        #expect(
            push["compared"]?["conflicts"] == [],
            "r2 moved on the server, but the clone's r2 is an untouched copy: no conflict")
        #expect(push["waiting"] == [])
        #expect(try world.record("b", "r4") == nil, "the pull removed what the server deleted")
        #expect(try world.record("b", "r2")?["text"] == "changed on the server", "and brought r2 up to date")

        // The server got the two edits and nothing else.
        #expect(try await world.tablesync("other", "sync").status == 0)
        let versionsAfter = try world.records("other").mapValues { $0["version"] }
        #expect(versionsAfter.filter { versionsBefore[$0.key] != $0.value }.keys.sorted() == ["r3", "r7"])
        #expect(try world.record("other", "r3")?["text"] == "edited in the clone")
        #expect(try world.record("other", "r7")?["done"] == true)
        #expect(try await world.tablesync("b", "sync").status == 0)
        #expect(try world.records("b") == world.records("other"), "the clone converged with the server")

        // The first repository, synced, loses its cache: nothing is sent or compared, every file is indexed as it is.
        #expect(try await world.tablesync("a", "sync").status == 0)
        try FileManager.default.removeItem(atPath: world.path("a/store/.tablesync"))
        let adopted = try await world.tablesyncJSON("a", "sync")
        #expect(adopted["push"]?["applied"] == 0, "\(adopted)")
        #expect(adopted["push"]?["compared"]?["conflicts"] == [])
        #expect(adopted["push"]?["compared"]?["unchanged"] == 0, "stamped copies need no comparison")
        #expect(try world.records("a") == world.records("other"))
        let clean = try await world.tablesyncJSON("a", "status")
        #expect(clean["clean"] == true, "\(clean)")
        await world.stop()
    }

    @Test(
        """
        two clones that sync and commit merge without conflicts; the merged store verifies and converges; reverts of a \
        sync and of an edit
        """
    )
    func mergeRevertAndRebase() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 6)
        try await world.git(".", "clone", "-q", "a", "b")
        #expect(try await world.tablesync("b", "git-setup").status == 0)
        #expect(try await world.tablesync("b", "sync").status == 0, "a clone's first sync, before the server moves")
        try await world.otherUser()

        // The server moves; a syncs; the server moves again; b syncs. Both commit.
        try world.edit("other", "r1", ["text": "first server change"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        try world.edit("a", "r4", ["done": true])
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try world.edit("other", "r1", ["text": "second server change"])
        try world.edit("other", "r2", ["done": true])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("b", "sync", "--commit").status == 0)
        try world.write("other", "r9", #"{"id": "r9", "text": "new on the server"}"#)
        #expect(try await world.tablesync("other", "sync").status == 0)

        // a merges b: every difference was made by a sync or by a pushed edit.
        try await world.git("a", "pull", "-q", "--no-rebase", "--no-edit", world.path("b"), "main")
        #expect(try await world.git("a", "diff", "--name-only", "--diff-filter=U").stdout.isEmpty, "no conflicted file")
        #expect(try world.record("a", "r1")?["text"] == "second server change", "the newer server copy")
        #expect(try world.record("a", "r4")?["done"] == true, "a's pushed edit stays")
        let queries = try JSONParser.parse(Array(try world.directory.read("a/store/queries.json").utf8))
        let bQueries = try JSONParser.parse(Array(try world.directory.read("b/store/queries.json").utf8))
        #expect(
            try #require(queries["queries"]?["todo"]?["updatedAt"]?.stringValue)
                < (try #require(bQueries["queries"]?["todo"]?["updatedAt"]?.stringValue)),
            "the older watermark of the two")
        #expect(try await world.tablesync("a", "verify").status == 0)
        let merged = try await world.tablesyncJSON("a", "sync")
        #expect(merged["push"]?["applied"] == 0, "the merged copies are the server's: nothing to send: \(merged)")
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try world.records("a") == world.records("other"), "converged")
        try await world.git("a", "add", "-A")
        try await world.git("a", "commit", "-q", "-m", "merged and synced")

        // b rebases its own sync commit onto a's history: the driver settles the replay too.
        try world.edit("other", "r3", ["text": "changed before the rebase"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("b", "sync", "--commit").status == 0)
        try await world.git("b", "pull", "-q", "--rebase", world.path("a"), "main")
        #expect(try await world.tablesync("b", "verify").status == 0)
        #expect(try await world.tablesync("b", "sync").status == 0)
        #expect(try world.records("b") == world.records("other"), "converged after the rebase")

        // a reverts a sync commit that brought a server change: the old content is the server's older copy, not an
        // edit; nothing is sent and the next pull brings the server's copy back.
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try world.edit("other", "r5", ["text": "a server change a reverts"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try await world.git("a", "revert", "--no-edit", "HEAD")
        #expect(try world.record("a", "r5")?["text"] == "item 5")
        #expect(try await world.tablesync("a", "verify").status == 0)
        let reverted = try await world.tablesyncJSON("a", "sync")
        #expect(reverted["push"]?["applied"] == 0, "\(reverted)")
        #expect(try world.record("a", "r5")?["text"] == "a server change a reverts", "brought up to date")

        // a reverts a commit of its own hand edit after it was synced: the revert is an edit, sent on the server's
        // version.
        try world.edit("a", "r6", ["text": "a's hand edit"])
        try await world.git("a", "commit", "-q", "-am", "a edits r6")
        let edit = try await world.head("a")
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try await world.git("a", "revert", "--no-edit", edit)
        #expect(try world.record("a", "r6")?["text"] == "item 6")
        let revertedEdit = try await world.tablesyncJSON("a", "sync")
        #expect(revertedEdit["push"]?["applied"] == 1, "\(revertedEdit)")
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try world.record("other", "r6")?["text"] == "item 6", "the revert reached the server")
        #expect(try world.records("a") == world.records("other"), "converged after the reverts")
        await world.stop()
    }

    @Test("both sides editing one property by hand: git stops, and status shows both sides")
    func realConflictIsReported() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 2)
        try await world.git(".", "clone", "-q", "a", "b")
        #expect(try await world.tablesync("b", "git-setup").status == 0)
        try world.edit("a", "r1", ["text": "a's words"])
        try await world.git("a", "commit", "-q", "-am", "a edits r1")
        try world.edit("b", "r1", ["text": "b's words", "done": true])
        try await world.git("b", "commit", "-q", "-am", "b edits r1")
        let pull = try await world.git(
            "b", "pull", "-q", "--no-rebase", "--no-edit", world.path("a"), "main", mayFail: true)
        #expect(pull.status != 0, "a real conflict stops the merge")
        let status = try await world.tablesync("b", "status")
        #expect(status.status == 7)
        #expect(status.stdout.contains("tables/todo/r1.json"), "\(status.stdout)")
        #expect(
            status.stdout.contains("ours has \"text\": \"b's words\", and theirs has \"text\": \"a's words\","),
            "\(status.stdout)")
        let merged = try world.directory.read("b/store/tables/todo/r1.json")
        #expect(merged.contains("\"done\": true"), "b's other edit is merged, outside the markers")
        await world.stop()
    }

    @Test("sync --commit commits the store's own files only, and only after a sync that changed them")
    func commitAfterSync() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 1)
        try world.directory.write("a/notes.txt", "not the store's\n")
        try await world.git("a", "add", "notes.txt")
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        #expect(
            try await world.git("a", "rev-list", "--count", "HEAD").stdout.hasPrefix("1"), "nothing changed: no commit")
        try world.edit("a", "r1", ["text": "edited"])
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        let log = try await world.git("a", "log", "-1", "--format=%s")
        #expect(log.stdout.hasPrefix("tablesync sync: pushed 1, pulled 0"), "\(log.stdout)")
        #expect(
            try await world.git("a", "diff", "--cached", "--name-only").stdout.contains("notes.txt"),
            "still staged, not committed")
        #expect(
            try await world.git("a", "show", "--name-only", "--format=", "HEAD").stdout.contains(
                "store/tables/todo/r1.json"))

        // A store without queries pushes, and says that it has nothing to pull.
        try FileManager.default.createDirectory(atPath: world.path("c"), withIntermediateDirectories: true)
        #expect(
            try await world.tablesync(
                "c", "init", "--remote", world.server.baseURL, "--table", "todo", "--no-default-queries"
            ).status == 0)
        let nothing = try await world.tablesync("c", "sync")
        #expect(nothing.status == 0)
        #expect(nothing.stderr.contains("nothing to pull: queries.json has no query"), "\(nothing.stderr)")
        await world.stop()
    }
}
