import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// A scan limited to the files a watch's events named (``ScanScope``): it finds what a whole scan finds in those
/// files, and nothing of the others, which a whole scan still finds later.
@Suite("Scans limited to named files") struct ScanScopeTests {
    @Test("a limited scan finds the edit, delete and creation it names, and leaves an unnamed edit to a whole scan")
    func limitedScan() async throws {
        let server = try await LiveServer.start(.sqlite, tables: ["todo"])
        let directory = TemporaryDirectory()
        let context = try SyncContext.initialize(
            directory: directory.file("store"), settings: StoreSettings(remote: server.baseURL, tables: ["todo"]))
        for id in ["r1", "r2", "r3", "r4"] {
            try await context.table("todo").insert(["id": .string(id), "text": "first"])
        }
        try await context.push(options: SyncOptions(retryPolicy: .none))
        #expect(await context.pendingOperations.isEmpty)
        // Older than the index's writes by more than a clock tick, so that its entries vouch for the files.
        try await Task.sleep(for: .milliseconds(50))

        for (id, text) in [("r1", "edited, named"), ("r2", "edited, not named")] {
            let file = "store/tables/todo/\(id).json"
            try directory.write(file, try directory.read(file).replacingOccurrences(of: "first", with: text))
        }
        try FileManager.default.removeItem(atPath: directory.file("store/tables/todo/r3.json"))
        try directory.write("store/tables/todo/r5.json", #"{"id": "r5", "text": "created"}"#)
        let named: ScanScope = .files(["todo": ["r1.json", "r3.json", "r4.json", "r5.json", "r9.json"]])
        let limited = try await context.recordHandEdits(keepingReadsUpTo: 0, scope: named).scan
        #expect(
            limited.changes.map { "\($0.id) \($0.kind)" } == ["r1 modified", "r3 deleted", "r5 created"],
            "r4 is named but unchanged, r9 named but never there, r2 changed but not named")
        #expect(limited.filesSeen == 3, "r1, r4 and r5 looked at; the rest of the table not listed")
        #expect(await context.pendingOperations.map(\.id) == ["r1", "r3", "r5"])

        let nothing = try await context.recordHandEdits(keepingReadsUpTo: 0, scope: .nothing).scan
        #expect(nothing.changes.isEmpty && nothing.filesSeen == 0)

        let whole = try await context.recordHandEdits(keepingReadsUpTo: 0, scope: .everything).scan
        #expect(whole.changes.map { "\($0.id) \($0.kind)" } == ["r2 modified"])
        #expect(await context.pendingOperations.map(\.id) == ["r1", "r3", "r5", "r2"])
        await context.close()
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }

    @Test("in git, a table whose tree in HEAD moved since a push reconciled it is scanned whole, named or not")
    func movedTreeIsScannedWhole() async throws {
        let world = try await GitWorld()
        try await world.seededRepository("repo", count: 3)
        try world.edit("repo", "r2", ["text": "edited, then committed by hand"])
        try await world.git("repo", "commit", "-q", "-am", "a hand edit")
        let context = try SyncContext(directory: world.path("repo") + "/store")
        let scan = try await context.recordHandEdits(keepingReadsUpTo: 0, scope: .nothing).scan
        #expect(scan.changes.map { "\($0.id) \($0.kind)" } == ["r2 modified"])
        await context.close()
        await world.stop()
    }

    @Test("a limited scan reports a named file that is no record, and knows a merge tool's copy beside its file")
    func limitedScanNamesProblems() async throws {
        let (directory, context) = try makeStore()
        try directory.write("store/tables/todo/a.json", #"{"id": "a"}"#)
        try directory.write("store/tables/todo/a_BASE_123.json", #"{"id": "a"}"#)
        try directory.write("store/tables/todo/b.json", "{ not json")
        let scan = try await context.recordHandEdits(
            keepingReadsUpTo: 0, scope: .files(["todo": ["a.json", "a_BASE_123.json", "b.json"]])
        ).scan
        #expect(scan.changes.map(\.id) == ["a"])
        #expect(scan.leftovers == ["tables/todo/a_BASE_123.json"])
        #expect(scan.problems.map(\.path) == ["tables/todo/b.json"])
    }

    @Test("the scope of two runs' events together covers both, and everything covers all")
    func scopesAdd() {
        let one = ScanScope.files(["todo": ["a.json"]])
        let two = ScanScope.files(["todo": ["b.json"], "notes": ["c.json"]])
        #expect(one.adding(two) == .files(["todo": ["a.json", "b.json"], "notes": ["c.json"]]))
        #expect(one.adding(.nothing) == one)
        #expect(one.adding(.everything) == .everything)
        #expect(ScanScope.everything.adding(one) == .everything)
        #expect(one.names(in: "todo") == ["a.json"] && one.names(in: "notes") == [])
        #expect(ScanScope.everything.names(in: "todo") == nil)
    }
}
