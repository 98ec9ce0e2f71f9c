import Foundation
import SyncProtocol
import Synchronization
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

@Suite struct StatusTests {
    /// A store with three synced records a, b, c.
    func syncedStore() async throws -> (TemporaryDirectory, SyncContext) {
        let (directory, context) = try makeStore()
        let records: [[String: JSONValue]] = ["a", "b", "c"].map {
            ["id": .string($0), "text": .string($0), "version": "v1"]
        }
        _ = try await context.applySynced(table: "todo", records: try records.map(ServerRecord.init))
        return (directory, context)
    }

    @Test func cleanStoreIsClean() async throws {
        let (directory, context) = try await syncedStore()
        defer { withExtendedLifetime(directory) {} }
        let status = try await context.status()
        #expect(status.isClean)
        #expect(status.filesSeen == 3)
    }

    @Test func handCreatedEditedAndDeletedRecordsShow() async throws {
        let (directory, context) = try await syncedStore()
        try directory.write("store/tables/todo/new.json", "{\"text\": \"made by hand\"}")
        try directory.write("store/tables/todo/a.json", "{\"id\": \"a\", \"text\": \"edited\", \"version\": \"v1\"}")
        try FileManager.default.removeItem(atPath: directory.file("store/tables/todo/b.json"))
        let status = try await context.status()
        #expect(status.handEdits.map { "\($0.kind.rawValue) \($0.id)" } == ["modified a", "deleted b", "created new"])
        #expect(status.problems.isEmpty)
        #expect(status.pending.isEmpty, "status changes nothing")
        #expect(try directory.read("store/journal.jsonl").isEmpty)

        let scan = try await context.recordHandEdits()
        #expect(scan.changes.count == 3)
        let operations = await context.pendingOperations
        #expect(
            operations.map { "\($0.kind.rawValue) \($0.id) \($0.baseVersion ?? "-")" } == [
                "update a v1", "delete b v1", "insert new -"
            ])
        #expect(try await context.status().handEdits.isEmpty, "once queued, edits are pending operations")
        try await context.recordHandEdits()
        #expect(await context.pendingOperations.count == 3, "recording twice queues nothing new")
    }

    @Test func brokenFilesAreReportedWithLineAndDoNotStopTheOthers() async throws {
        let (directory, context) = try await syncedStore()
        try directory.write(
            "store/tables/todo/a.json", "{\n  \"id\": \"a\",\n  \"text\": \"oops\"\n  \"version\": \"v1\"\n}\n")
        try directory.write("store/tables/todo/b.json", "[1, 2]")
        try directory.write("store/tables/todo/zz.json", "{\"id\": \"other\"}")
        try directory.write("store/tables/todo/ok.json", "{\"id\": \"ok\"}")
        try directory.write("store/tables/todo/notes.txt", "hello")
        let status = try await context.status()
        let problems = status.problems.map(\.description)
        #expect(
            problems.contains { $0.hasPrefix("tables/todo/a.json:4:3: unexpected '\"'; expected ',' or '}'") },
            "\(problems)")
        #expect(problems.contains { $0.hasPrefix("tables/todo/b.json:1:1: a record file must hold a JSON object") })
        #expect(
            problems.contains {
                $0.contains("tables/todo/zz.json") && $0.contains("belongs in a file named other.json")
            })
        #expect(problems.contains { $0.contains("notes.txt") })
        #expect(status.handEdits.map(\.id) == ["ok"])
        try await context.recordHandEdits()
        #expect(await context.pendingOperations.map(\.id) == ["ok"], "the valid file still goes ahead")
    }

    @Test func unchangedStoreReadsNoFile() async throws {
        let (directory, context) = try makeStore()
        let records: [[String: JSONValue]] = (0..<200).map {
            ["id": .string("r\($0)"), "n": .integer(Int64($0)), "version": "v"]
        }
        _ = try await context.applySynced(table: "todo", records: try records.map(ServerRecord.init))
        // Let the file timestamps fall behind the index's, so no entry is "racily clean".
        try await Task.sleep(for: .milliseconds(20))
        _ = try await context.applySynced(table: "todo", records: [try ServerRecord(["id": "last", "version": "v"])])
        let status = try await context.status()
        #expect(status.filesSeen == 201)
        #expect(status.filesHashed <= 1, "only a file written in the index's own clock tick may need a hash")
        // A touch without a content change costs a hash, not a change.
        let path = directory.file("store/tables/todo/r5.json")
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 10)], ofItemAtPath: path)
        let touched = try await context.status()
        #expect(touched.handEdits.isEmpty)
        #expect(touched.filesHashed >= 1)
    }

    @Test func verifyFindsBrokenFilesAndLeftovers() async throws {
        let (directory, context) = try await syncedStore()
        #expect(try await context.verify().isEmpty)
        try directory.write("store/tables/todo/a.json", "{\"id\": \"a\", \"text\": \"hand\"}")
        try directory.write("store/tables/todo/b.json", "{")
        try directory.write("store/.tablesync/tmp/tmp-1-2-0", "partial")
        let findings = try await context.verify()
        #expect(
            findings.contains {
                $0.severity == .notice && $0.path == "tables/todo/a.json" && $0.message.contains("canonical")
            })
        #expect(findings.contains { $0.severity == .error && $0.path == "tables/todo/b.json" })
        #expect(findings.contains { $0.severity == .notice && $0.path.hasPrefix(".tablesync/tmp/") })
        let root = context.layout.root
        await context.close()
        _ = try SyncContext(directory: root)
        #expect(!directory.exists("store/.tablesync/tmp/tmp-1-2-0"), "a read-write open removes temporary files")
    }

    @Test func interruptedSyncedWriteIsCompletedOnOpen() async throws {
        let (directory, context) = try await syncedStore()
        let root = context.layout.root
        await context.close()
        // A run that died after renaming a.json into place but before recording it in the index.
        let bytes = CanonicalJSON.encode(["id": "a", "text": "from server", "version": "v2"])
        try Data(bytes).write(to: URL(fileURLWithPath: directory.file("store/tables/todo/a.json")))
        let hash = ContentHash.of(bytes)
        try directory.write("store/.tablesync/intent", "todo\ta.json\ta\t\(hash)\twrite\tv2\n")
        let reopened = try SyncContext(directory: root)
        let status = try await reopened.status()
        #expect(status.handEdits.isEmpty, "the server's copy is not mistaken for a hand edit")
        #expect(!directory.exists("store/.tablesync/intent"))
        try directory.write("store/tables/todo/a.json", "{\"id\": \"a\", \"text\": \"mine\", \"version\": \"v2\"}")
        try await reopened.recordHandEdits()
        #expect(await reopened.pendingOperations.first?.baseVersion == "v2")
    }
}

@Suite struct ParallelScanTests {
    /// Enough changed files that the scan reads them on every core, with each kind of outcome spread through the
    /// listing: edits, touches without a change, broken files, hand-made files. The result must be what a scan
    /// of one file at a time finds, in the same order.
    @Test func manyChangedFilesGiveTheSameChangesAndProblemsInOrder() async throws {
        let (directory, context) = try makeStore()
        let records: [[String: JSONValue]] = (0..<400).map {
            ["id": .string(String(format: "r%03d", $0)), "n": .integer(Int64($0)), "version": "v1"]
        }
        _ = try await context.applySynced(table: "todo", records: try records.map(ServerRecord.init))
        var expectedEdits: [String] = []
        var expectedProblems: [String] = []
        for number in 0..<400 {
            let id = String(format: "r%03d", number)
            let path = "store/tables/todo/\(id).json"
            switch number % 4 {
            case 0:
                try directory.write(path, "{\"id\": \"\(id)\", \"n\": \(number + 1000), \"version\": \"v1\"}")
                expectedEdits.append("modified \(id)")
            case 1:
                // The same bytes written again: the stat changes, the content does not.
                try directory.write(path, try directory.read(path))
            case 2 where number % 8 == 2:
                try directory.write(path, "{\"id\": \"\(id)\",")
                expectedProblems.append("tables/todo/\(id).json")
            default:
                break
            }
        }
        for number in 0..<40 {
            let id = String(format: "new%02d", number)
            try directory.write("store/tables/todo/\(id).json", "{\"id\": \"\(id)\"}")
            expectedEdits.append("created \(id)")
        }
        let status = try await context.status()
        // Changes come sorted by file name.
        expectedEdits.sort { $0.split(separator: " ")[1] < $1.split(separator: " ")[1] }
        #expect(status.handEdits.map { "\($0.kind.rawValue) \($0.id)" } == expectedEdits)
        #expect(status.problems.map(\.path) == expectedProblems)
        #expect(status.problems.allSatisfy { $0.line == 1 }, "each problem keeps its own line and column")
        #expect(status.filesHashed >= 100 + 50 + 40, "edited, broken and new files are read")
        let scan = try await context.recordHandEdits()
        #expect(scan.changes.count == expectedEdits.count)
    }

    @Test func concurrentMapKeepsOrderAtEverySize() {
        for count in [0, 1, 63, 64, 127, 128, 129, 1_000] {
            let input = Array(0..<count)
            #expect(concurrentMap(input) { $0 * 3 + 1 } == input.map { $0 * 3 + 1 }, "\(count) elements")
            #expect(
                concurrentMap(input, minimumSlice: 1) { "\($0)" } == input.map { "\($0)" },
                "\(count) elements, slices of one")
        }
    }

    @Test(
        """
        pipelinedMap hands every chunk to its consumer once, in order, mapped; a consumer's error stops it and is \
        rethrown
        """
    )
    func pipelinedMapInOrder() async throws {
        struct Refused: Error {}
        for count in [0, 1, 255, 256, 257, 1_000] {
            for chunkSize in [1, 7, 256] {
                var next = 0
                try pipelinedMap(count: count, chunkSize: chunkSize, { "\($0 * 3 + 1)" }) { range, results in
                    #expect(range.lowerBound == next && range.count == results.count && range.count <= chunkSize)
                    #expect(
                        Array(results) == range.map { "\($0 * 3 + 1)" }, "\(count) elements, chunks of \(chunkSize)")
                    next = range.upperBound
                }
                #expect(next == count, "\(count) elements, chunks of \(chunkSize)")
            }
        }
        let mapped = Mutex(0)
        var consumed = 0
        #expect(throws: Refused.self) {
            try pipelinedMap(
                count: 1_000_000, chunkSize: 100,
                { index in
                    mapped.withLock { $0 += 1 }
                    return index
                }
            ) { _, _ in
                consumed += 1
                if consumed == 3 { throw Refused() }
            }
        }
        #expect(consumed == 3)
        // Returned after its threads stopped (the count no longer moves), which was long before the last chunk.
        let atReturn = mapped.withLock { $0 }
        #expect(atReturn < 1_000_000 && atReturn % 100 == 0)
        try? await Task.sleep(for: .milliseconds(20))
        #expect(mapped.withLock { $0 } == atReturn)
    }

    @Test(
        """
        the scan skips a file removed between the listing and its stat, and lists a table directory that is gone as \
        empty
        """
    )
    func statusesOfVanishedFiles() throws {
        let directory = TemporaryDirectory()
        try directory.write("a.json", "{}")
        try directory.write("gone.json", "{}")
        let listing = try DirectoryListing(directory.path)
        try FileManager.default.removeItem(atPath: directory.path + "/gone.json")
        var byName: [String: FileSystem.Status?] = [:]
        try listing.forEachStatus { byName[listing.name(at: $0)] = $1 }
        #expect(byName.count == 2 && byName["a.json"]??.isRegularFile == true && byName["gone.json"]! == nil)
        try FileManager.default.removeItem(atPath: directory.path)
        var none: [FileSystem.Status?] = []
        try listing.forEachStatus { none.append($1) }
        #expect(none == [nil, nil])
        #expect(try DirectoryListing(directory.path + "/missing").count == 0)
    }

    @Test(
        """
        a listing keeps names as read and sorts them in the index's byte order, whole names deciding where the first \
        eight bytes tie
        """
    )
    func listingOrder() throws {
        let names = [
            "é.json", "a.jsonx", "a", "Z.json", "abcdefgh1.json", "^a.json", "%C3%A9.json", "abcdefgh.json",
            "abcdefgh0", "a.json", "abcdefg.json", "b"
        ]
        let directory = TemporaryDirectory()
        for name in names { try directory.write(name, "{}") }
        let listing = try DirectoryListing(directory.path)
        let listed = (0..<listing.count).map(listing.name(at:))
        #expect(Set(listed) == Set(names) && listed.count == names.count)
        let sorted = listing.sorted()
        #expect((0..<sorted.count).map(sorted.name(at:)) == names.sorted(by: StatIndexLine.precedes))
        listing.withNames { bytes in
            #expect((0..<listing.count).allSatisfy { Array(bytes[$0]) == Array(listed[$0].utf8) })
        }
    }

    @Test("the radix sort orders by key as a stable comparison sort does, over keys that differ in any byte or tie")
    func radixSortMatchesStableSort() {
        var generator = SystemRandomNumberGenerator()
        // Few distinct bytes, so that keys tie often; a constant byte, so that a pass is skipped; and extremes.
        var items = (0..<5_000).map { position in
            var key: UInt64 = 0x42
            for byte in 1..<8 { key |= UInt64(UInt8.random(in: 0...3, using: &generator)) << (8 * byte) }
            return KeyedPosition(key: key, position: UInt32(position))
        }
        items += [
            KeyedPosition(key: .max, position: 5_000), KeyedPosition(key: 0, position: 5_001),
            KeyedPosition(key: .max, position: 5_002)
        ]
        items.shuffle(using: &generator)
        // Stable: items of one key stay in the order they had.
        let expected = items.enumerated().sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }
            .map(\.element)
        var sorted = items
        radixSortByKey(&sorted)
        #expect(sorted == expected)
        var same = [KeyedPosition](repeating: KeyedPosition(key: 7, position: 1), count: 3)
        radixSortByKey(&same)
        #expect(same.count == 3 && same.allSatisfy { $0.key == 7 })
    }
}
