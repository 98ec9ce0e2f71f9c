import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

@Suite struct LocalChangeTests {
    @Test func initWritesTheLayout() throws {
        let (directory, _) = try makeStore()
        for file in ["tablesync.json", "queries.json", "journal.jsonl", ".gitattributes", ".tablesync/.gitignore"] {
            #expect(directory.exists("store/" + file), "\(file)")
        }
        #expect(try directory.read("store/journal.jsonl").isEmpty)
        #expect(try directory.read("store/.tablesync/.gitignore") == "*\n")
        #expect(try directory.read("store/.gitattributes").contains("journal.jsonl merge=union"))
        #expect(throws: StoreError.self) {
            _ = try SyncContext.initialize(
                directory: directory.path + "/store", settings: StoreSettings(remote: "http://x"))
        }
    }

    @Test func insertUpdateDeleteWriteFilesAndCollapseInTheJournal() async throws {
        let (directory, context) = try makeStore()
        let todo = try await context.table("todo")
        let inserted = try await todo.insert([
            "text": "Buy milk", "version": "ignored", "updatedAt": "2024-01-01T00:00:00Z"
        ])
        let id = try #require(inserted["id"]?.stringValue)
        #expect(id.count == 36 && id == id.lowercased())
        #expect(inserted["version"] == nil && inserted["updatedAt"] == nil)
        let file = "store/tables/todo/\(id).json"
        #expect(try directory.read(file) == "{\n  \"id\": \"\(id)\",\n  \"text\": \"Buy milk\"\n}\n")
        try await todo.update(["id": .string(id), "text": "Buy oat milk"])
        #expect(try await todo.read(id: id)?["text"] == "Buy oat milk")
        #expect(await context.pendingOperations.map(\.kind) == [.insert])
        try await todo.delete(id: id)
        #expect(!directory.exists(file))
        #expect(await context.pendingOperations.isEmpty, "insert then delete leaves nothing to push")
        #expect(try directory.read("store/journal.jsonl").isEmpty)
        await #expect(throws: StoreError.self) { try await todo.update(["id": .string(id), "text": "gone"]) }
        await #expect(throws: StoreError.self) { try await todo.insert(["id": "a/b"]) }
        await #expect(throws: StoreError.self) { try await context.table("nope") }
    }

    @Test func updateWithUnchangedContentQueuesNothingAndKeepsTheFile() async throws {
        let (directory, context) = try makeStore()
        let todo = try await context.table("todo")
        _ = try await context.applySynced(
            table: "todo", records: [try ServerRecord(["id": "a", "text": "x", "version": "v1"])])
        let path = directory.file("store/tables/todo/a.json")
        let before = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        let inode = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        try await todo.update(["id": "a", "text": "x"])
        #expect(await context.pendingOperations.isEmpty)
        let outcome = try await context.applySynced(
            table: "todo", records: [try ServerRecord(["id": "a", "text": "x", "version": "v1"])])
        #expect(outcome == SyncedRecordWriter.Outcome(written: 0, removed: 0, unchanged: 1))
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == before)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int == inode)
        try await todo.update(["id": "a", "text": "y"])
        let operation = try #require(await context.pendingOperations.first)
        #expect(operation.kind == .update && operation.baseVersion == "v1")
        #expect(
            try directory.read("store/tables/todo/a.json").contains("\"version\": \"v1\""),
            "server-managed properties are kept")
    }

    @Test(
        """
        a pulled record this store never synced is made only where no file is: a file made by hand in its place stays, \
        unlearned
        """
    )
    func pullLeavesAHandMadeFileInPlace() async throws {
        let (directory, context) = try makeStore()
        try directory.write("store/tables/todo/h.json", "{\"text\": \"mine\"}")
        let pulled: [[String: JSONValue]] = [
            ["id": "h", "text": "server", "version": "v1"], ["id": "n", "text": "new", "version": "v1"]
        ]
        let outcome = try await context.applySynced(
            table: "todo", records: try pulled.map(ServerRecord.init), guard: .unchangedSinceSync)
        #expect(outcome == SyncedRecordWriter.Outcome(written: 1, removed: 0, unchanged: 0, skipped: ["h"]))
        #expect(try directory.read("store/tables/todo/h.json") == "{\"text\": \"mine\"}")
        #expect(try directory.read("store/tables/todo/n.json").contains("\"new\""))
        #expect(try await context.status().handEdits.map { "\($0.kind.rawValue) \($0.id)" } == ["created h"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("store/.tablesync/tmp")).isEmpty)
    }

    @Test("a batch's create puts a file only where none is, and reports the paths where one was")
    func createLeavesAnExistingFile() throws {
        let directory = TemporaryDirectory()
        try directory.write("there.json", "before")
        var batch = DurableFileBatch()
        batch.create(Array("new".utf8), at: directory.file("there.json"))
        batch.create(Array("new".utf8), at: directory.file("absent.json"))
        let notPlaced = try batch.commit(temporaryDirectory: directory.file("tmp"))
        #expect(notPlaced == [directory.file("there.json")])
        #expect(try directory.read("there.json") == "before" && directory.read("absent.json") == "new")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("tmp")).isEmpty)
    }

    @Test func journalSurvivesReopeningAndReportsBadLines() async throws {
        let (directory, context) = try makeStore()
        try await context.table("todo").insert(["id": "a"])
        try await context.table("todo").insert(["id": "b"])
        let root = context.layout.root
        await context.close()
        let reopened = try SyncContext(directory: root)
        #expect(await reopened.pendingOperations.map(\.id) == ["a", "b"])
        #expect(await reopened.pendingOperations.map(\.sequence) == [1, 2])
        await reopened.close()
        try directory.write(
            "store/journal.jsonl",
            #"{"id":"a","op":"insert","seq":1,"table":"todo"}"# + "\n"
                + #"{"id":"b","op":"upsert","seq":2,"table":"todo"}"# + "\n"
        )
        #expect {
            _ = try SyncContext(directory: root)
        } throws: { error in
            guard case StoreError.invalidJournalLine(_, let line, let reason) = error else { return false }
            return line == 2 && reason.contains("\"op\"")
        }
    }

    @Test func unionMergedJournalLinesFoldPerRecord() async throws {
        let (directory, context) = try makeStore()
        let root = context.layout.root
        await context.close()
        try directory.write("store/tables/todo/a.json", "{\n  \"id\": \"a\"\n}\n")
        // What git's union merge gives when two branches queued changes to one record.
        try directory.write(
            "store/journal.jsonl",
            """
            {"id":"a","op":"insert","seq":1,"table":"todo"}
            {"id":"b","op":"update","seq":2,"table":"todo","version":"v1"}
            {"id":"a","op":"update","seq":3,"table":"todo","version":"v2"}
            {"id":"b","op":"delete","seq":2,"table":"todo","version":"v1","item":{"id":"b"}}

            """)
        let reopened = try SyncContext(directory: root)
        let operations = await reopened.pendingOperations
        #expect(operations.map(\.kind) == [.insert, .delete])
        #expect(operations.map(\.id) == ["a", "b"])
    }

    @Test func secondWriterIsRefusedAtOnceAndReaderIsNot() async throws {
        let (directory, context) = try makeStore()
        defer { withExtendedLifetime(directory) {} }
        #expect {
            _ = try SyncContext(directory: context.layout.root, purpose: "second writer")
        } throws: { error in
            (error as? StoreLockError)?.holder.contains("tablesync library") == true
        }
        let reader = try SyncContext(directory: context.layout.root, mode: .readOnly)
        await #expect(throws: StoreError.self) { try await reader.table("todo").insert(["id": "x"]) }
        let root = context.layout.root
        await context.close()
        _ = try SyncContext(directory: root, purpose: "after the first closed")
    }

    /// Another thread of the process may fork while the store is open (the tests start servers and the command
    /// line; a host application may run anything). Until its `exec`, the child shares the lock's open file
    /// description. Here a child keeps that copy for good (duplicated onto a descriptor without close-on-exec),
    /// the widest form of that window.
    @Test("releasing the lock unlocks it even while a forked child still shares the lock file")
    func lockReleasedDespiteForkedCopy() throws {
        let directory = TemporaryDirectory()
        let layout = StoreLayout(root: directory.path)
        var lock: StoreLock? = try StoreLock.acquire(layout: layout, purpose: "first")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, try #require(lock).descriptor, 100)
        var child: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("60"), nil]
        defer { argv.forEach { free($0) } }
        try #require(posix_spawn(&child, "/bin/sleep", &actions, nil, argv, environ) == 0)
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        #expect(throws: StoreLockError.self) { _ = try StoreLock.acquire(layout: layout, purpose: "second") }
        lock = nil
        _ = try StoreLock.acquire(layout: layout, purpose: "after the first was released")
    }

    @Test(
        "a read vouches by stat only for a file changed before the clock was read, and only while its stat is unchanged"
    )
    func readFilesVouchByStat() throws {
        let status = FileSystem.Status(
            size: 10, modifiedNanoseconds: 100, changedNanoseconds: 100, inode: 7, isDirectory: false,
            isRegularFile: true)
        let loaded = RecordFile.Loaded(id: "a", record: ["id": "a"], bytes: Array("{}".utf8))
        let read = ReadRecordFile(loaded: loaded, hash: "h", status: status, clock: 200)
        #expect(read.sentFile.status == status)
        #expect(read.isCurrent(status))
        var touched = status
        touched.changedNanoseconds = 300
        #expect(!read.isCurrent(touched), "a changed ctime means a change")
        #expect(!read.isCurrent(nil), "a removed file")
        // Changed in the same tick as the clock was read: it could change again unseen, so the stat vouches nothing.
        let racy = ReadRecordFile(loaded: loaded, hash: "h", status: status, clock: 100)
        #expect(racy.sentFile.status == nil)
        #expect(!racy.isCurrent(status))
    }

    @Test("the push sends a hand edit as the scan read it, and a file edited after the scan as it is now")
    func pushSendsWhatTheFileHolds() async throws {
        let (directory, context) = try makeStore()
        try directory.write("store/tables/todo/a.json", #"{"id": "a", "text": "first"}"#)
        try directory.write("store/tables/todo/b.json", #"{"id": "b", "text": "first"}"#)
        // Older than the scan by more than a clock tick, so the scan's stat can vouch for what it read.
        try await Task.sleep(nanoseconds: 50_000_000)
        let recorded = try await context.recordHandEdits(keepingReadsUpTo: 10)
        #expect(Set(recorded.scan.changes.map(\.id)) == ["a", "b"])
        var reads = recorded.reads
        try await Task.sleep(nanoseconds: 50_000_000)
        try directory.write("store/tables/todo/b.json", #"{"id": "b", "text": "later"}"#)

        let a = try #require(
            try context.recordFiles.toSend(
                table: "todo", id: "a", scanned: reads.take(RecordKey(table: "todo", id: "a"))))
        #expect(a.loaded.record["text"] == "first")
        #expect(a.sent.status != nil, "the scan's copy, vouched for by its stat")
        let b = try #require(
            try context.recordFiles.toSend(
                table: "todo", id: "b", scanned: reads.take(RecordKey(table: "todo", id: "b"))))
        #expect(b.loaded.record["text"] == "later", "edited after the scan: read again")
        #expect(b.sent.hash == ContentHash.of(Array(#"{"id": "b", "text": "later"}"#.utf8)))
        #expect(try context.recordFiles.toSend(table: "todo", id: "gone", scanned: nil) == nil)
    }
}
