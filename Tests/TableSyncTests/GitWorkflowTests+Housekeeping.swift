import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSyncStorage

/// What a person's tools leave in a store kept in git, and what `purge --force` drops: played with the real `git` and
/// the real `tablesync` against a live server, as ``GitWorkflowTests`` does.
extension GitWorkflowTests {
    // MARK: - Editors and merge tools

    /// Stands for a person who edits record files with vim, emacs and a JetBrains IDE and resolves merges with
    /// `git mergetool`: each leaves its own files beside the record files.
    @Test(
        """
        editor and merge-tool leftovers beside record files: status, verify and sync --commit go on (exit 0), list \
        them as ignored, send nothing for them and commit none
        """
    )
    func editorLeftoversAreIgnored() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        let server = try await world.serverRows()
        let leftovers = [
            "r1.json~", "r1.json.orig", "r1.json.rej", "#r1.json#", "4913", "r1_BASE_1234.json", "r1_LOCAL_1234.json",
            "r1_REMOTE_1234.json", "r1.json.swp", ".r1.json.swp", "r2.json___jb_old___"
        ]
        for name in leftovers {
            try world.directory.write("a/store/tables/todo/\(name)", #"{"id": "r1", "text": "an older r1"}"# + "\n")
        }
        try world.edit("a", "r2", ["text": "a real edit"])

        let status = try await world.tablesyncJSON("a", "status")
        #expect(status["problems"]?.arrayValue?.isEmpty == true, "no leftover is a broken file: \(status)")
        let ignored = Set((status["ignored"]?.arrayValue ?? []).compactMap(\.stringValue))
        #expect(
            ignored == Set(leftovers.filter { !$0.hasPrefix(".") }.map { "tables/todo/" + $0 }),
            "every leftover is listed as ignored (hidden files are ignored silently): \(ignored)")
        #expect(try await world.tablesync("a", "verify").status == 0)

        let sync = try await world.tablesync("a", "sync", "--commit")
        #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
        var expected = server
        expected["r2"]?["text"] = "a real edit"
        #expect(
            try await world.serverRows().mapValues(ServerRecord.content) == expected.mapValues(ServerRecord.content),
            "only the real edit went out")
        let committed = try await world.git("a", "ls-files", "store/tables/todo").stdout.split(separator: "\n")
        #expect(
            Set(committed) == ["store/tables/todo/r1.json", "store/tables/todo/r2.json", "store/tables/todo/r3.json"],
            "no leftover was committed: \(committed)")
        let untracked = try await world.git("a", "status", "--porcelain", "--untracked-files=all").stdout
        #expect(
            untracked.contains("r1_BASE_1234.json"),
            "a mergetool copy is only left out of the commit (its name could be a record's), not ignored by git")
        #expect(
            !untracked.contains("r1.json~") && !untracked.contains("4913"), "the rest is in .gitignore: \(untracked)")
        await world.stop()
    }

    /// Stands for hand edits that broke the JSON (a half-saved edit, a new file cut short) in a store whose cron job
    /// runs `sync --commit`: whatever the sync could not read stays out of history, so that no other clone inherits
    /// it.
    @Test("sync --commit never commits a record file the sync could not read; the last good copy stays committed")
    func unreadableFilesAreNeverCommitted() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        let good = try await world.git("a", "show", "HEAD:store/tables/todo/r1.json").stdout
        try world.directory.write("a/store/tables/todo/r1.json", "{\"id\": \"r1\", \"text\": \"half an edit\"\n")
        try world.directory.write("a/store/tables/todo/new.json", "{\"id\": \"new\", \"text\": ")
        try world.edit("a", "r3", ["text": "a good edit"])
        let sync = try await world.tablesync("a", "sync", "--commit")
        #expect(sync.status == 7, "the broken files are reported: \(sync.stdout) \(sync.stderr)")
        #expect(try await world.serverRows()["r3"]?["text"] == "a good edit", "the rest went")
        #expect(
            try await world.git("a", "show", "HEAD:store/tables/todo/r1.json").stdout == good,
            "the committed r1 is still the last good copy")
        #expect(
            try await world.git("a", "ls-files", "store/tables/todo/new.json").stdout.isEmpty,
            "a new broken file is not committed")
        #expect(
            try await world.git("a", "show", "HEAD:store/tables/todo/r3.json").stdout.contains("a good edit"),
            "the sync's own changes are committed")
        await world.stop()
    }

    /// Stands for a clone on Windows (`core.autocrlf=true`), where git checks the store's text files out with CRLF.
    @Test("git-setup in a clone under core.autocrlf=true adds no line twice, and the first sync commits nothing of it")
    func gitSetupUnderAutocrlf() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 2)
        #expect(try await world.tablesync("a", "git-setup").status == 0, "writes the .gitignore lines")
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try await world.git(".", "clone", "-q", "-c", "core.autocrlf=true", "a", "b")
        let attributes = try String(contentsOfFile: world.path("b/store/.gitattributes"), encoding: .utf8)
        #expect(attributes.contains("\r\n"), "the clone holds CRLF lines")
        let setup = try await world.tablesyncJSON("b", "git-setup")
        #expect(setup["linesAdded"] == [:], "every line is there already: \(setup)")
        #expect(try await world.porcelain("b").isEmpty, "nothing changed in the work tree")
        let sync = try await world.tablesyncJSON("b", "sync", "--commit")
        #expect(sync["commit"] == .null, "nothing to commit: \(sync)")
        await world.stop()
    }

    /// Stands for reading `git log` of a cron-synced store: a commit says what it changed.
    @Test("a sync --commit that moved no record but brought files up to date says so in its subject, and names them")
    func commitOfFilesBroughtUpToDate() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 3)
        try await world.otherUser()
        try world.edit("other", "r1", ["text": "a teammate's words"])
        #expect(try await world.tablesync("other", "sync").status == 0)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try await world.git("a", "revert", "--no-edit", "HEAD")
        let sync = try await world.tablesyncJSON("a", "sync", "--commit")
        #expect(sync["push"]?["applied"] == 0, "\(sync)")
        let message = try await world.git("a", "log", "-1", "--format=%B").stdout
        #expect(
            message.hasPrefix("tablesync sync: ") && message.contains("store file(s) brought up to date"),
            "not \"pushed 0, pulled 0\": \(message)")
        #expect(message.contains("store/tables/todo/r1.json") || message.contains("tables/todo/r1.json"), "\(message)")
        await world.stop()
    }

    // MARK: - The cost of a scan after the store's own commit

    /// Stands for a cron `sync --commit` followed by a person's `tablesync status`: the store's own commit brought
    /// every record file into git, and the index knows each of them, so the scan has nothing to ask git beyond `HEAD`.
    @Test("status right after sync --commit lists no tree: the store's own commit counts as reconciled")
    func statusAfterOwnCommitListsNoTree() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 5)
        try world.edit("a", "r1", ["text": "an edit by hand"])
        try world.write("a", "r6", #"{"id": "r6", "text": "a record made by hand"}"#)
        #expect(try await world.tablesync("a", "sync", "--commit").status == 0)
        try world.edit("a", "r2", ["text": "an edit after the commit"])
        let trace = world.path("git-trace")
        let status = try await world.tablesync(
            "a", arguments: ["status", "--json"], environment: ["GIT_TRACE": trace])
        #expect(status.status == 0, "\(status.stderr)")
        let edits = try JSONParser.parse(Array(status.stdout.utf8))["handEdits"]?.arrayValue ?? []
        #expect(edits.count == 1 && edits.first?["id"] == "r2", "\(status.stdout)")
        let commands = try String(contentsOfFile: trace, encoding: .utf8)
        for listing in ["ls-tree", "diff-tree"] {
            #expect(!commands.contains(" \(listing) "), "status listed a tree: \(commands)")
        }
        await world.stop()
    }

    // MARK: - purge --force drops every kind of change

    /// Stands for a person who deleted record files by hand (one, then a whole table's worth), changed their mind
    /// and ran `purge --force` to start again from the server, as the README says it does.
    @Test(
        """
        purge --force after hand deletes (one file, then every file): nothing is deleted on the server, it says what \
        it dropped, and the next sync brings the records back
        """
    )
    func purgeForceDropsHandDeletes() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 6)
        let server = try await world.serverRows()
        try FileManager.default.removeItem(atPath: world.path("a/store/tables/todo/r2.json"))
        try world.edit("a", "r3", ["text": "a hand edit to drop"])
        let status = try await world.tablesyncJSON("a", "status")
        #expect(status["handEdits"]?.arrayValue?.count == 2, "\(status)")

        let purged = try await purge(world, "--force")
        #expect(purged["droppedHandChanges"] == 2, "\(purged)")
        let after = try await world.tablesyncJSON("a", "status")
        #expect(after["handEdits"] == [], "nothing of the hand changes is left: \(after)")
        let sync = try await world.tablesyncJSON("a", "sync", "--commit")
        #expect(sync["push"]?["applied"] == 0, "nothing sent: \(sync)")
        #expect(try await world.serverRows() == server, "the server kept every record as it was")
        #expect(try world.records("a").count == 6, "the pull brought every record back")
        #expect(try world.record("a", "r3")?["text"] == "item 3")

        for id in try world.records("a").keys {
            try FileManager.default.removeItem(atPath: world.path("a/store/tables/todo/\(id).json"))
        }
        let all = try await purge(world, "--force")
        #expect(all["droppedHandChanges"] == 6, "\(all)")
        let again = try await world.tablesync("a", "sync", "--commit")
        #expect(again.status == 0, "no mass-delete brake to meet, nothing to delete: \(again.stdout) \(again.stderr)")
        #expect(try await world.serverRows() == server)
        #expect(try world.records("a").count == 6)
        await world.stop()
    }

    /// A purge without `--force` in a store kept in git: the files `HEAD` still has are the purged records, not
    /// deletes, also after a commit moves `HEAD` before the next sync.
    @Test("purge of a whole table, then a commit of a new record and sync: nothing is deleted on the server")
    func purgeThenCommit() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("a", count: 4)
        let server = try await world.serverRows()

        let purged = try await purge(world)
        #expect(purged["removed"] == 4, "\(purged)")
        try world.write("a", "r9", #"{"id": "r9", "text": "committed before the next sync"}"#)
        try await world.git("a", "add", "store/tables/todo/r9.json")
        try await world.git("a", "commit", "-q", "-m", "a new record")
        let sync = try await world.tablesync("a", "sync", "--commit")
        #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
        let after = try await world.serverRows()
        #expect(after.filter { $0.key != "r9" } == server, "nothing deleted, nothing changed")
        #expect(after["r9"]?["text"] == "committed before the next sync", "the new record was sent")
        #expect(try world.records("a").count == 5, "the purged records came back beside the new one")
        await world.stop()
    }

    /// `tablesync purge todo` in repository `a`, its stat index flushed at every other line (debug builds), as a
    /// store of thousands of records flushes it: the purge leaves the index empty, not a log of removals.
    private func purge(_ world: GitWorld, _ arguments: String...) async throws -> JSONValue {
        let run = try await world.tablesync(
            "a", arguments: ["purge", "todo", "--json"] + arguments,
            environment: ["TABLESYNC_INDEX_FLUSH_LINES": "2"])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        return try JSONParser.parse(Array(run.stdout.utf8))
    }
}
