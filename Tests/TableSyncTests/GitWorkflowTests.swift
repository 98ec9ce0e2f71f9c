import Foundation
import SyncProtocol
import Testing
import TestSupport

/// A store kept in git by a team, played with the real `git` and the real `tablesync` against a live server: each
/// test stands for something people do with git every day (named in its title) and checks what reached the server
/// and what is left in the store's files. The invariants they hold are in docs/store.md, "Keeping a store in git".
@Suite(.serialized) struct GitWorkflowTests {
    // MARK: - Only real edits travel

    @Test(
        """
        git checkout of an older commit, then the cron sync: refused; allowed, it sends nothing and brings the files \
        up to date
        """
    )
    func checkoutOfHistory() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 4)
        let older = try await world.head("a")
        try await world.otherUser()
        try world.edit("other", "r1", ["text": "a teammate's newer words"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        let newer = try await world.serverRows()

        try await world.git("a", "checkout", "-q", "--detach", older)
        let refused = try await world.tablesync("a", "sync")
        #expect(refused.status == 9, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("behind"), "\(refused.stderr)")
        #expect(try await world.serverRows() == newer, "nothing was sent")
        let status = try await world.tablesyncJSON("a", "status")
        #expect(
            status["git"]?.arrayValue?.contains { $0.stringValue?.contains("behind") == true } == true,
            "status says so: \(status)")

        let allowed = try await world.tablesyncJSON("a", "sync", "--allow-older-head")
        #expect(allowed["push"]?["applied"] == 0, "an old server copy is not an edit: \(allowed)")
        #expect(try await world.serverRows() == newer)
        #expect(
            try world.record("a", "r1")?["text"] == "a teammate's newer words", "brought up to date from the server")

        // The allowed sync brought the older commit's files up to date: local changes for git, dropped like any.
        try await world.git("a", "checkout", "-q", "-f", "main")
        let back = try await world.tablesyncJSON("a", "sync")
        #expect(back["push"]?["applied"] == 0, "\(back)")
        #expect(try await world.serverRows() == newer, "nothing flipped back either")
        await world.stop()
    }

    @Test("git reset --hard HEAD~N after sync commits is refused like a checkout of history")
    func resetToAnOlderCommit() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        try world.edit("a", "r2", ["text": "edited and synced"])
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        let synced = try await world.serverRows()
        try await world.git("a", "reset", "-q", "--hard", "HEAD~1")
        #expect(try world.record("a", "r2")?["text"] == "item 2")
        let refused = try await world.tablesync("a", "push")
        #expect(refused.status == 9, "\(refused.stdout) \(refused.stderr)")
        #expect(try await world.serverRows() == synced, "the old content did not go out")
        await world.stop()
    }

    @Test("sync --no-commit, then git restore store/: the restored server copies are not edits")
    func restoreAfterAnUncommittedSync() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        try await world.otherUser()
        try world.edit("other", "r2", ["text": "changed on the server"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--no-commit").status == 0)
        #expect(try world.record("a", "r2")?["text"] == "changed on the server")
        let server = try await world.serverRows()

        try await world.git("a", "restore", "store/")
        #expect(try world.record("a", "r2")?["text"] == "item 2", "git put the older copy back")
        let sync = try await world.tablesyncJSON("a", "sync")
        #expect(sync["push"]?["applied"] == 0, "\(sync)")
        #expect(try await world.serverRows() == server, "the server kept the newer value")
        #expect(try world.record("a", "r2")?["text"] == "changed on the server", "and the file holds it again")
        await world.stop()
    }

    @Test(
        """
        git stash of a hand edit, a checkout of another branch and back, git stash pop: the edit is sent once, nothing \
        else
        """
    )
    func stashCheckoutAndPop() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        let server = try await world.serverRows()
        try world.edit("a", "r1", ["text": "edited, then stashed"])
        try await world.git("a", "stash", "-q")
        #expect(
            try await world.tablesyncJSON("a", "sync")["push"]?["applied"] == 0,
            "the stashed edit is not in the work tree")
        #expect(try await world.serverRows() == server)
        try await world.git("a", "checkout", "-q", "-b", "elsewhere")
        try await world.git("a", "checkout", "-q", "main")
        try await world.git("a", "stash", "pop", "-q")
        let sync = try await world.tablesyncJSON("a", "sync")
        #expect(sync["push"]?["applied"] == 1, "\(sync)")
        let after = try await world.serverRows()
        #expect(after["r1"]?["text"] == "edited, then stashed")
        #expect(after.filter { $0.key != "r1" } == server.filter { $0.key != "r1" }, "nothing else changed")
        await world.stop()
    }

    @Test(
        """
        git switch between two branches that synced at different times: old copies come up to date, records one branch \
        lacks are brought back, nothing is sent
        """
    )
    func switchBetweenBranches() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 4)
        try await world.otherUser()
        try await world.git("a", "switch", "-q", "-c", "feature")
        try world.edit("other", "r1", ["text": "changed while on feature"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)

        // main is behind feature's sync commit: a checkout of older history, refused until allowed.
        try await world.git("a", "switch", "-q", "main")
        #expect(try await world.tablesync("a", "sync").status == 9)
        let allowed = try await world.tablesyncJSON("a", "sync", "--allow-older-head", "--commit")
        #expect(allowed["push"]?["applied"] == 0, "\(allowed)")
        #expect(try world.record("a", "r1")?["text"] == "changed while on feature")

        // On main the server moves on: a new record, a change; then back to feature, which has neither.
        try world.write("other", "r9", #"{"id": "r9", "text": "created while on main"}"#)
        try world.edit("other", "r2", ["text": "changed while on main"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        let server = try await world.serverRows()
        try await world.git("a", "switch", "-q", "feature")
        #expect(try world.record("a", "r9") == nil && world.record("a", "r2")?["text"] == "item 2")
        let switched = try await world.tablesyncJSON("a", "sync", "--commit")
        #expect(switched["push"]?["applied"] == 0, "\(switched)")
        #expect(
            switched["push"]?["compared"]?["restored"] == 1,
            "r9 is brought back, not deleted on the server: \(switched)")
        #expect(try await world.serverRows() == server, "the server did not change")
        #expect(try world.record("a", "r9")?["text"] == "created while on main")
        #expect(try world.record("a", "r2")?["text"] == "changed while on main")
        try await world.git("a", "switch", "-q", "main")
        #expect(try await world.tablesyncJSON("a", "sync")["push"]?["applied"] == 0)
        #expect(try await world.serverRows() == server)
        #expect(try world.records("a") == world.records("other"))
        await world.stop()
    }

    @Test("cherry-pick of an old sync commit onto a branch: the older server copies it brings are not edits")
    func cherryPickOfAnOldSyncCommit() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        let start = try await world.head("a")
        try await world.otherUser()
        try world.edit("other", "r1", ["text": "second"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        let oldSync = try await world.head("a")
        try world.edit("other", "r1", ["text": "third"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        let server = try await world.serverRows()

        try await world.git("a", "switch", "-q", "-c", "side", start)
        try world.directory.write("a/notes.txt", "a branch of its own\n")
        try await world.git("a", "add", "notes.txt")
        try await world.git("a", "commit", "-q", "-m", "notes")
        try await world.git("a", "cherry-pick", oldSync)
        #expect(try world.record("a", "r1")?["text"] == "second", "the old copy")
        let sync = try await world.tablesyncJSON("a", "sync")
        #expect(sync["push"]?["applied"] == 0, "\(sync)")
        #expect(try await world.serverRows() == server)
        #expect(try world.record("a", "r1")?["text"] == "third", "brought up to date")
        await world.stop()
    }

    @Test("a rebase that reorders a sync commit and an edit commit: the edit is sent once, the sync's copies are not")
    func reorderingRebase() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        try await world.otherUser()
        try world.edit("other", "r2", ["text": "from the server"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try world.edit("a", "r3", ["text": "a's edit"])
        try await world.git("a", "commit", "-q", "-am", "a edits r3")
        let server = try await world.serverRows()
        // The sequence editor swaps the two picks: the edit first, then the sync commit.
        var environment = world.environment
        environment["GIT_SEQUENCE_EDITOR"] =
            #"sh -c 'sed -n "1p" "$1" > "$1.first"; sed -n "2p" "$1" > "$1.second"; "#
            + #"cat "$1.second" "$1.first" > "$1"' --"#
        let rebase = try await runProgram(
            "/usr/bin/env", ["git", "-C", world.path("a"), "rebase", "-q", "-i", "HEAD~2"], environment: environment)
        #expect(rebase.status == 0, "\(rebase.stdout) \(rebase.stderr)")
        let subjects = try await world.git("a", "log", "-2", "--format=%s").stdout
        #expect(subjects.hasPrefix("tablesync sync"), "reordered: \(subjects)")
        let sync = try await world.tablesyncJSON("a", "sync")
        #expect(sync["push"]?["applied"] == 1, "only the edit: \(sync)")
        let after = try await world.serverRows()
        #expect(after["r3"]?["text"] == "a's edit")
        #expect(after.filter { $0.key != "r3" } == server.filter { $0.key != "r3" })
        await world.stop()
    }

    // MARK: - Deletes are as safe as edits

    @Test("a record file deleted in a fresh clone, or after rm -rf .tablesync or git clean -fdx, is sent as a delete")
    func handDeleteWithoutTheCache() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 4)
        try await world.git(".", "clone", "-q", "a", "b")
        try FileManager.default.removeItem(atPath: world.path("b/store/tables/todo/r2.json"))
        let status = try await world.tablesyncJSON("b", "status")
        #expect(
            status["git"]?.arrayValue?.contains { $0.stringValue?.contains("git-setup") == true } == true,
            "a clone without the merge driver is told to set it up: \(status)")
        let deleted = status["handEdits"]?.arrayValue?.filter { $0["change"] == "missing" }.compactMap {
            $0["id"]?.stringValue
        }
        #expect(deleted == ["r2"], "status says what the next sync sends: \(status)")
        let sync = try await world.tablesyncJSON("b", "sync", "--commit")
        #expect(sync["push"]?["applied"] == 1, "\(sync)")
        #expect(try await world.liveServerRows()["r2"] == nil, "the server no longer has r2")

        #expect(try await world.tablesync("a", "sync").status == 0)
        try FileManager.default.removeItem(atPath: world.path("a/store/.tablesync"))
        try FileManager.default.removeItem(atPath: world.path("a/store/tables/todo/r3.json"))
        #expect(try await world.tablesyncJSON("a", "sync")["push"]?["applied"] == 1)
        #expect(try await world.liveServerRows()["r3"] == nil)

        try await world.git("a", "commit", "-q", "-am", "synced")
        try await world.git("a", "clean", "-q", "-fdx")
        try FileManager.default.removeItem(atPath: world.path("a/store/tables/todo/r4.json"))
        #expect(try await world.tablesyncJSON("a", "sync")["push"]?["applied"] == 1)
        #expect(try await world.liveServerRows().keys.sorted() == ["r1"])
        await world.stop()
    }

    @Test("a teammate's delete merged over an edit made here: a conflict, the edit kept and sendable, never removed")
    func mergedDeleteOverAnEdit() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 5)
        try await world.syncedClone("a", "b")
        #expect(try await world.tablesync("a", "delete", "todo", "r5").status == 0)
        try await world.git("a", "add", "-A")
        try await world.git("a", "commit", "-q", "-m", "a deletes r5")
        try world.edit("b", "r5", ["text": "b's words"])
        try await world.git("b", "commit", "-q", "-am", "b edits r5")
        let merge = try await world.git(
            "b", "pull", "-q", "--no-rebase", "--no-edit", world.path("a"), "main", mayFail: true)
        #expect(merge.status != 0, "git stops at modify/delete")
        try await world.git("b", "add", "store/tables/todo/r5.json")
        try await world.git("b", "commit", "-q", "--no-edit")

        let sync = try await world.tablesync("b", "sync")
        #expect(sync.status == 3, "a conflict waits: \(sync.stdout) \(sync.stderr)")
        #expect(try world.record("b", "r5")?["text"] == "b's words", "the file keeps the edit")
        #expect(try await world.liveServerRows()["r5"] != nil, "the delete did not go out")
        let again = try await world.tablesync("b", "status")
        #expect(again.status == 3 && again.stdout.contains("todo/r5"), "status keeps showing it: \(again.stdout)")

        #expect(try await world.tablesync("b", "resolve", "todo/r5", "--keep-local").status == 0)
        #expect(try await world.tablesync("b", "sync").status == 0)
        #expect(try await world.liveServerRows()["r5"]?["text"] == "b's words", "the edit reached the server")
        // a sends its own delete, made on the version before b's edit: the server refuses it, and a decides.
        let late = try await world.tablesync("a", "sync")
        #expect(late.status == 3, "\(late.stdout) \(late.stderr)")
        #expect(try await world.liveServerRows()["r5"]?["text"] == "b's words")
        await world.stop()
    }

    @Test("after a merge, a record the server already deleted is not sent as a delete nor called deleted by hand")
    func mergeOfAServerDelete() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 4)
        try await world.syncedClone("a", "b")
        try await world.otherUser()
        try FileManager.default.removeItem(atPath: world.path("other/store/tables/todo/r3.json"))
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try await world.git("b", "pull", "-q", "--no-rebase", "--no-edit", world.path("a"), "main")
        #expect(try world.record("b", "r3") == nil)

        let status = try await world.tablesyncJSON("b", "status")
        let kinds = status["handEdits"]?.arrayValue?.compactMap { $0["change"]?.stringValue }
        #expect(kinds == ["removedByGit"], "removed by the merge, not by hand: \(status)")
        let sync = try await world.tablesyncJSON("b", "sync")
        #expect(sync["push"]?["applied"] == 0 && sync["push"]?["requests"] == 0, "no DELETE went out: \(sync)")
        #expect(sync["push"]?["compared"]?["alreadyDeleted"] == 1, "\(sync)")
        #expect(try await world.tablesyncJSON("b", "status")["clean"] == true)
        await world.stop()
    }

    @Test("rm of more than half of a table's files is refused by the mass-delete brake until allowed")
    func massDeleteBrakeOnPush() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 12)
        for number in 1...7 {
            try FileManager.default.removeItem(atPath: world.path("a/store/tables/todo/r\(number).json"))
        }
        let refused = try await world.tablesync("a", "sync")
        #expect(
            refused.status != 0 && refused.stderr.contains("allow-mass-delete"), "\(refused.stdout) \(refused.stderr)")
        #expect(try await world.liveServerRows().count == 12, "nothing deleted")
        let allowed = try await world.tablesyncJSON("a", "sync", "--allow-mass-delete")
        #expect(allowed["push"]?["applied"] == 7)
        #expect(try await world.liveServerRows().count == 5)
        await world.stop()
    }

    // MARK: - Files pair by record id

    @Test(
        """
        git's rename pairing of two similar records: an edit is never sent to the other record (merge, rebase, \
        cherry-pick, stash)
        """
    )
    func renamePairing() async throws {
        let world = try await GitWorld()
        let long = String(repeating: "A paragraph that every record of this table shares, word for word. ", count: 20)
        try FileManager.default.createDirectory(atPath: world.path("a"), withIntermediateDirectories: true)
        try await world.git("a", "init", "-q", "-b", "main")
        #expect(try await world.tablesync("a", "init", "--remote", world.server.baseURL, "--table", "todo").status == 0)
        for number in 1...5 {
            try world.write(
                "a", "t0\(number)",
                CanonicalJSON.string(["id": .string("t0\(number)"), "text": .string(long), "n": .integer(Int64(number))]
                ))
        }
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try await world.syncedClone("a", "b")
        try await world.otherUser()
        // The server deletes t04 and gets t99, whose text is almost t04's.
        try FileManager.default.removeItem(atPath: world.path("other/store/tables/todo/t04.json"))
        try world.write("other", "t99", CanonicalJSON.string(["id": "t99", "text": .string(long), "n": 4]))
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        let t99 = try #require(try await world.serverRows()["t99"])

        try world.edit("b", "t04", ["n": 40])
        try await world.git("b", "commit", "-q", "-am", "b edits t04")
        try await world.git("b", "branch", "edit")
        try await world.git("b", "fetch", "-q", world.path("a"), "main:theirs")

        // Merge: git pairs t04.json with t99.json as one renamed file (merge-ort does whatever merge.renames says);
        // the merge driver refuses to merge two records' files, so git stops instead of carrying b's edit into t99.
        try await world.git("b", "reset", "-q", "--hard", "edit")
        let merge = try await runProgram(
            "/usr/bin/env", ["git", "-C", world.path("b"), "merge", "--no-edit", "theirs"],
            environment: world.environment)
        #expect(merge.status != 0, "git stops: \(merge.stdout) \(merge.stderr)")
        #expect(merge.stderr.contains("different records"), "the driver says why: \(merge.stderr)")
        #expect(try await world.unmerged("b").contains("store/tables/todo/t99.json"))
        #expect(try await world.tablesync("b", "sync").status == 9, "nothing is sent while the merge is unsettled")
        #expect(try await world.serverRows()["t99"] == t99)

        // Settled as the driver says: t99 as a's side has it, t04 brought back from b's own commit.
        try await world.git("b", "checkout", "--theirs", "--", "store/tables/todo/t99.json")
        try await world.git("b", "checkout", "HEAD", "--", "store/tables/todo/t04.json")
        try await world.git("b", "add", "store/tables/todo/t04.json", "store/tables/todo/t99.json")
        try await world.git("b", "commit", "-q", "--no-edit")
        let sync = try await world.tablesync("b", "sync")
        #expect(sync.status == 3, "t04 was deleted on the server: a conflict, \(sync.stdout) \(sync.stderr)")
        #expect(try await world.serverRows()["t99"] == t99, "t99 untouched")
        #expect(try await world.tablesync("b", "resolve", "todo/t04", "--keep-local").status == 0)
        #expect(try await world.tablesync("b", "sync").status == 0)
        #expect(try await world.liveServerRows()["t04"]?["n"] == 40, "the edit was kept: t04 is back with it")
        #expect(try await world.serverRows()["t99"] == t99)

        // Rebase and cherry-pick of b's edit onto a's commit pair the files the same way, and stop the same way.
        for replay in [["rebase", "theirs"], ["cherry-pick", "edit"]] {
            try await world.git("b", "reset", "-q", "--hard", replay[0] == "rebase" ? "edit" : "theirs")
            let run = try await runProgram(
                "/usr/bin/env", ["git", "-C", world.path("b")] + replay, environment: world.environment)
            #expect(run.status != 0, "\(replay[0]) stops at t99")
            #expect(run.stderr.contains("different records"), "\(replay[0]): \(run.stderr)")
            #expect(try await world.unmerged("b").contains("store/tables/todo/t99.json"), "\(replay[0])")
            try await world.git("b", replay[0], "--abort")
        }
        // So does a stash of the edit popped onto a's commit.
        try await world.git("b", "reset", "-q", "--hard", "edit^")
        try world.edit("b", "t04", ["n": 40])
        try await world.git("b", "stash", "-q")
        try await world.git("b", "reset", "-q", "--hard", "theirs")
        let pop = try await runProgram(
            "/usr/bin/env", ["git", "-C", world.path("b"), "stash", "pop"], environment: world.environment)
        #expect(pop.status != 0 && pop.stderr.contains("different records"), "stash pop stops at t99: \(pop.stderr)")
        #expect(try await world.unmerged("b").contains("store/tables/todo/t99.json"))
        await world.stop()
    }

    // MARK: - No markers in the index

    @Test(
        "sync --commit during an unsettled merge refuses before touching anything; sync never stages a conflicted file")
    func commitDuringAMerge() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        try await world.syncedClone("a", "b")
        try world.edit("a", "r1", ["text": "a's words"])
        try await world.git("a", "commit", "-q", "-am", "a edits r1")
        try world.edit("b", "r1", ["text": "b's words"])
        try await world.git("b", "commit", "-q", "-am", "b edits r1")
        _ = try await world.git("b", "pull", "-q", "--no-rebase", "--no-edit", world.path("a"), "main", mayFail: true)
        #expect(try await world.unmerged("b") == ["store/tables/todo/r1.json"])
        try world.edit("b", "r2", ["text": "an edit waiting in b"])
        let server = try await world.serverRows()

        let refused = try await world.tablesync("b", "sync", "--commit")
        #expect(refused.status == 9, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("merge"), "\(refused.stderr)")
        #expect(try await world.serverRows() == server, "nothing was sent")
        #expect(try await world.unmerged("b") == ["store/tables/todo/r1.json"], "the conflict is still git's to settle")
        let waiting = try await world.tablesync("b", "status")
        #expect(
            waiting.stdout.contains("a git merge is under way"), "status says why the sync waits: \(waiting.stdout)")

        let plain = try await world.tablesync("b", "sync")
        #expect(plain.status == 9, "a sync waits for the merge too: \(plain.stdout) \(plain.stderr)")
        #expect(try await world.serverRows() == server)
        #expect(try await world.unmerged("b") == ["store/tables/todo/r1.json"], "plain sync staged nothing")
        let status = try await world.git("b", "status").stdout
        #expect(!status.contains("All conflicts fixed"), "\(status)")
        await world.stop()
    }

    // MARK: - The cache ignores itself

    @Test(
        """
        the cache stays out of git after a clone's first sync, rm -rf .tablesync and git clean -fdx; a tracked cache \
        is untracked
        """
    )
    func cacheStaysOutOfGit() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 2)
        try await world.syncedClone("a", "b")
        let afterFirstSync = try await world.porcelain("b")
        #expect(afterFirstSync.isEmpty, "after the first sync: \(afterFirstSync)")
        try FileManager.default.removeItem(atPath: world.path("b/store/.tablesync"))
        #expect(try await world.tablesync("b", "sync").status == 0)
        let afterLostCache = try await world.porcelain("b")
        #expect(afterLostCache.isEmpty, "after rm -rf .tablesync: \(afterLostCache)")
        try await world.git("b", "clean", "-q", "-fdx")
        #expect(try await world.tablesync("b", "sync").status == 0)
        let afterClean = try await world.porcelain("b")
        #expect(afterClean.isEmpty, "after git clean -fdx: \(afterClean)")

        // A cache committed by `git add -f` (or by an add -A from before it ignored itself) leaves git at the next
        // commit.
        try await world.git("b", "add", "-f", "store/.tablesync")
        try await world.git("b", "commit", "-q", "-m", "the cache, by mistake")
        try world.edit("b", "r1", ["text": "edited"])
        #expect(try await world.tablesync("b", "sync", "--commit").status == 0)
        #expect(try await world.git("b", "ls-files", "store/.tablesync").stdout.isEmpty, "untracked")
        #expect(FileManager.default.fileExists(atPath: world.path("b/store/.tablesync/lock")), "and still on disk")
        #expect(try await world.porcelain("b").isEmpty)
        await world.stop()
    }

    // MARK: - An operation is sent once across clones

    @Test(
        "operations committed while pending and merged into another clone are sent once, by the clone that queued them")
    func operationsSentOnce() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        try await world.syncedClone("a", "b")
        #expect(try await world.tablesync("a", "insert", "todo", #"{"id": "n1", "text": "new in a"}"#).status == 0)
        #expect(
            try await world.tablesync("a", "update", "todo", #"{"id": "r1", "text": "a's update", "done": false}"#)
                .status == 0)
        try await world.git("a", "add", "-A")
        try await world.git("a", "commit", "-q", "-m", "a's pending operations")
        let pendingCommit = try await world.head("a")
        #expect(try await world.tablesyncJSON("a", "sync", "--commit")["push"]?["applied"] == 2)
        try await world.otherUser()
        try world.edit("other", "r1", ["text": "a third writer"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        let server = try await world.serverRows()

        try await world.git("b", "fetch", "-q", world.path("a"), "main:theirs")
        try await world.git("b", "merge", "-q", "--no-edit", pendingCommit)
        #expect(
            try await world.tablesyncJSON("b", "log")["pending"]?.arrayValue?.count == 2,
            "the merge brought a's operations")
        let sync = try await world.tablesyncJSON("b", "sync", "--commit")
        #expect(sync["push"]?["applied"] == 0 && sync["push"]?["conflicts"] == [], "not sent again: \(sync)")
        #expect(sync["push"]?["queuedElsewhere"]?.arrayValue?.count == 2, "\(sync)")
        #expect(try await world.serverRows() == server, "the third writer's words stay")

        // a's later commit takes them out of the journal.
        try await world.git("b", "merge", "-q", "--no-edit", "theirs")
        let after = try await world.tablesyncJSON("b", "sync", "--commit")
        #expect(after["push"]?["applied"] == 0, "\(after)")
        #expect(try await world.tablesyncJSON("b", "log")["pending"] == [])
        #expect(try await world.serverRows() == server)
        #expect(try world.records("b") == world.records("other"), "converged")
        await world.stop()
    }

    /// Stands for two clones of one store where a teammate committed a pending update without syncing it (or left
    /// it waiting on a conflict), and the other clone then edits the same record by hand: the edit is this clone's.
    @Test("a hand edit of a record whose operation another clone queued is this clone's: sent by it, shown as its own")
    func ownEditOverAnotherClonesOperation() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        try await world.syncedClone("a", "b")
        #expect(
            try await world.tablesync("a", "update", "todo", #"{"id": "r1", "text": "a's update", "done": false}"#)
                .status == 0)
        try await world.git("a", "add", "-A")
        try await world.git("a", "commit", "-q", "-m", "a's pending update")
        try await world.git("b", "fetch", "-q", world.path("a"), "main:theirs")
        try await world.git("b", "merge", "-q", "--no-edit", "theirs")
        // As git writes the file out under core.autocrlf=true: HEAD's record with CRLF line ends, still a's content.
        let path = world.path("b/store/tables/todo/r1.json")
        let merged = try String(contentsOfFile: path, encoding: .utf8)
        try merged.replacingOccurrences(of: "\n", with: "\r\n").write(toFile: path, atomically: true, encoding: .utf8)
        let status = try await world.tablesyncJSON("b", "status")
        #expect(status["queuedElsewhere"]?.arrayValue?.count == 1, "merged as it is, a's update stays a's: \(status)")
        #expect(status["handEdits"]?.arrayValue?.isEmpty ?? false, "\(status)")

        try world.edit("b", "r1", ["done": true])
        let edited = try await world.tablesyncJSON("b", "status")
        #expect(edited["handEdits"]?.arrayValue?.count == 1, "b's status lists b's edit: \(edited)")
        let sync = try await world.tablesyncJSON("b", "sync", "--commit")
        #expect(sync["push"]?["applied"] == 1, "b sends it: \(sync)")
        #expect(sync["push"]?["queuedElsewhere"]?.arrayValue?.isEmpty ?? true, "\(sync)")
        let row = try await world.liveServerRows()["r1"]
        #expect(
            row?["text"] == "a's update" && row?["done"] == true, "the file as b holds it: \(String(describing: row))")
        await world.stop()
    }

    /// Stands for a person who commits a hand edit and pushes it to the team's repository without syncing, while
    /// another clone's cron job syncs it; the author's next edit of the record is made over that committed content.
    @Test("an edit made over this clone's own committed edit, which another clone sent meanwhile, is no conflict")
    func editOverOwnEditSentElsewhere() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        try await world.syncedClone("a", "b")
        try world.edit("a", "r1", ["text": "a's first edit"])
        try await world.git("a", "commit", "-q", "-am", "a's edit, pushed to the team unsynced")
        try await world.git("b", "fetch", "-q", world.path("a"), "main:theirs")
        try await world.git("b", "merge", "-q", "--no-edit", "theirs")
        #expect(try await world.tablesyncJSON("b", "sync", "--commit")["push"]?["applied"] == 1, "b's cron sends it")

        try world.edit("a", "r1", ["done": true])
        let sync = try await world.tablesyncJSON("a", "sync")
        #expect(sync["push"]?["applied"] == 1 && sync["push"]?["conflicts"] == [], "\(sync)")
        let row = try await world.liveServerRows()["r1"]
        #expect(row?["text"] == "a's first edit" && row?["done"] == true, "\(String(describing: row))")
        await world.stop()
    }

    @Test(
        """
        an operation sent by its clone and brought back by a cherry-pick of the commit that held it is dropped by its \
        acknowledgement
        """
    )
    func cherryPickedOperationIsAcknowledged() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        let start = try await world.head("a")
        try await world.syncedClone("a", "b")
        #expect(
            try await world.tablesync("a", "update", "todo", #"{"id": "r2", "text": "a's update", "done": false}"#)
                .status == 0)
        try await world.git("a", "add", "-A")
        try await world.git("a", "commit", "-q", "-m", "a's pending update")
        let pending = try await world.head("a")
        #expect(try await world.tablesyncJSON("a", "sync", "--commit")["push"]?["applied"] == 1)
        #expect(
            try world.directory.read("a/store/sent.jsonl").contains("\"id\":\"r2\""),
            "acknowledged in the committed file")
        let server = try await world.serverRows()

        try await world.git("b", "fetch", "-q", world.path("a"), "main:theirs")
        try await world.git("b", "switch", "-q", "-c", "side", start)
        try await world.git("b", "merge", "-q", "--no-edit", "theirs")
        try await world.git("b", "cherry-pick", "--keep-redundant-commits", pending)
        #expect(
            try world.directory.read("b/store/journal.jsonl").contains("\"r2\""),
            "the cherry-pick brought the line back")
        #expect(try await world.tablesyncJSON("b", "log")["pending"] == [], "and its acknowledgement drops it")
        #expect(try await world.tablesyncJSON("b", "sync")["push"]?["applied"] == 0)
        #expect(try await world.serverRows() == server)
        await world.stop()
    }

    // MARK: - Conflicts only where something conflicts

    @Test("a clone made after the server changed records gets them, with no conflict for records nobody touched")
    func cloneAfterTheServerMoved() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 30)
        try await world.otherUser()
        for number in stride(from: 1, through: 30, by: 3) {
            try world.edit("other", "r\(number)", ["text": "changed on the server"])
        }
        #expect(try await world.tablesync("other", "sync").status == 0)
        try await world.git(".", "clone", "-q", "a", "b")
        let sync = try await world.tablesyncJSON("b", "sync", "--commit")
        #expect(sync["push"]?["applied"] == 0, "\(sync)")
        #expect(sync["push"]?["compared"]?["conflicts"] == [] && sync["push"]?["conflicts"] == [], "\(sync)")
        #expect(try world.records("b") == world.records("other"), "the clone holds the server's records")
        #expect(!FileManager.default.fileExists(atPath: world.path("b/store/conflicts")), "no conflict file to commit")
        await world.stop()
    }

    // MARK: - Smaller

    @Test("the merge driver still runs after the binary that set it up moved away")
    func mergeDriverSurvivesAMove() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 2)
        try await world.git(".", "clone", "-q", "a", "b")
        let moved = world.path("bin-that-moves")
        try FileManager.default.createDirectory(atPath: moved, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: builtProduct("tablesync"), toPath: moved + "/tablesync")
        let setup = try await runProgram(
            moved + "/tablesync", ["-C", world.path("b/store"), "git-setup"], environment: world.environment)
        #expect(setup.status == 0, "\(setup.stderr)")
        try FileManager.default.removeItem(atPath: moved)

        try world.edit("a", "r1", ["text": "a's words"])
        try await world.git("a", "commit", "-q", "-am", "a edits r1")
        try world.edit("b", "r1", ["done": true])
        try await world.git("b", "commit", "-q", "-am", "b edits r1")
        // `tablesync` is on the PATH (as an installed binary is); the driver finds it there.
        var environment = world.environment
        environment["PATH"] =
            (builtProduct("tablesync") as NSString).deletingLastPathComponent + ":" + (environment["PATH"] ?? "")
        let merge = try await runProgram(
            "/usr/bin/env",
            ["git", "-C", world.path("b"), "pull", "-q", "--no-rebase", "--no-edit", world.path("a"), "main"],
            environment: environment)
        #expect(merge.status == 0, "\(merge.stdout) \(merge.stderr)")
        #expect(
            try world.record("b", "r1")?["text"] == "a's words" && world.record("b", "r1")?["done"] == true,
            "merged property by property")
        await world.stop()
    }

    @Test(
        """
        sync --commit without a git identity (as under cron): the sync is done, the commit's failure has its own exit \
        code
        """
    )
    func commitWithoutIdentity() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 2)
        try world.edit("a", "r1", ["text": "edited under cron"])
        let noIdentity: [String: String?] = [
            "GIT_AUTHOR_NAME": nil, "GIT_AUTHOR_EMAIL": nil, "GIT_COMMITTER_NAME": nil, "GIT_COMMITTER_EMAIL": nil,
            "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.useConfigOnly", "GIT_CONFIG_VALUE_0": "true"
        ]
        let run = try await world.tablesync("a", arguments: ["sync", "--commit"], environment: noIdentity)
        #expect(run.status == 10, "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("pushed 1 operation"), "the sync's own report is printed: \(run.stdout)")
        #expect(run.stderr.contains("identity") || run.stderr.contains("user.email"), "\(run.stderr)")
        #expect(try await world.liveServerRows()["r1"]?["text"] == "edited under cron", "the sync was done")
        await world.stop()
    }
}
