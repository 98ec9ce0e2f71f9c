import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

#if os(Linux)
/// Spare files: record writes go over files kept from earlier writes, and a run leaves some for the next. Linux
/// only: elsewhere the swap falls back to a plain rename and nothing becomes a spare.
@Suite struct SpareFilesTests {
    private func names(in directory: String) throws -> [String] {
        try FileSystem.listDirectory(directory).map(\.name).sorted()
    }

    private func inode(_ path: String) throws -> UInt64 {
        try #require(try FileSystem.status(path)).inode
    }

    @Test func replacedContentsBecomeSparesThatTheNextBatchWritesOver() throws {
        let directory = TemporaryDirectory()
        let spares = SpareFiles(directory: directory.file("spares"))
        let records = (0..<5).map { directory.file("r\($0).json") }
        for path in records { try directory.write((path as NSString).lastPathComponent, "old \(path)") }
        let oldInodes = try Set(records.map(inode))

        var first = DurableFileBatch()
        for path in records { first.write(Array("first \(path)".utf8), to: path) }
        try first.commit(temporaryDirectory: directory.file("tmp"), spares: spares)
        for path in records { #expect(try directory.read((path as NSString).lastPathComponent) == "first \(path)") }
        // The old contents were swapped out, not freed: they are the spares now.
        let spareNames = try names(in: spares.directory)
        #expect(spareNames.count == 5 && spareNames.allSatisfy { $0.hasPrefix(SpareFiles.namePrefix) })
        #expect(try Set(spareNames.map { try inode(spares.directory + "/" + $0) }) == oldInodes)

        // The second batch creates no file: its contents go over the spares, and the files they replace take
        // their places among the spares.
        var second = DurableFileBatch()
        for path in records { second.write(Array("second \(path)".utf8), to: path) }
        try second.commit(temporaryDirectory: directory.file("tmp"), spares: spares)
        for path in records { #expect(try directory.read((path as NSString).lastPathComponent) == "second \(path)") }
        #expect(try Set(records.map(inode)) == oldInodes, "the record files are the old files, written over")
        #expect(try names(in: spares.directory) == spareNames)
        #expect(try names(in: directory.file("tmp")).isEmpty)
    }

    @Test("a spare written over holds exactly the new bytes, whether they are shorter, as long or longer")
    func overwritingASpareLeavesNoOldTail() throws {
        let directory = TemporaryDirectory()
        try directory.write("spare", "an old record content of 40 bytes here!")
        let path = directory.file("spare")
        let inode = try inode(path)
        for content in ["shorter", "exactly seven", "as long as that", "longer than anything before it, by far"] {
            try FileSystem.overwriteFile(path, Array(content.utf8))
            #expect(try directory.read("spare") == content)
        }
        try FileSystem.overwriteFile(path, Array("same size as it".utf8))
        try FileSystem.overwriteFile(path, Array("same size as it".utf8.reversed()))
        #expect(try directory.read("spare") == String("same size as it".reversed()))
        #expect(try self.inode(path) == inode, "written over, not replaced")
    }

    @Test("a new content goes over the longest spare known to be no longer, so it needs no cutting")
    func sparesAreChosenBySize() throws {
        let directory = TemporaryDirectory()
        let spares = SpareFiles(directory: directory.file("spares"))
        let sizes = [10, 30, 50]
        var first = DurableFileBatch()
        var oldInodes: [Int: UInt64] = [:]
        for (number, size) in sizes.enumerated() {
            try directory.write("r\(number).json", String(repeating: "o", count: size))
            oldInodes[size] = try inode(directory.file("r\(number).json"))
            first.write(
                Array("new \(number)".utf8), to: directory.file("r\(number).json"), replacedSize: Int64(size))
        }
        try first.commit(temporaryDirectory: directory.file("tmp"), spares: spares)

        // Spares of 10, 30 and 50 bytes, the longest kept last: 35 bytes go over the one of 30, 60 over the one of 50.
        for (name, size, spare) in [("a.json", 35, 30), ("b.json", 60, 50)] {
            try directory.write(name, "old")
            var batch = DurableFileBatch()
            let content = String(repeating: "n", count: size)
            batch.write(Array(content.utf8), to: directory.file(name))
            try batch.commit(temporaryDirectory: directory.file("tmp"), spares: spares)
            #expect(try directory.read(name) == content)
            #expect(try inode(directory.file(name)) == oldInodes[spare], "\(size) bytes over the spare of \(spare)")
        }
        // None known to fit: the latest spare, cut to size.
        var short = DurableFileBatch()
        short.write(Array("tiny".utf8), to: directory.file("a.json"))
        try short.commit(temporaryDirectory: directory.file("tmp"), spares: spares)
        #expect(try directory.read("a.json") == "tiny")
    }

    @Test("a run keeps for the next one the spares whose known size is small enough, and removes the others")
    func retainedSparesByKnownSize() async throws {
        let directory = TemporaryDirectory()
        let spares = SpareFiles(directory: directory.file("spares"), retainedMaximumSize: 40)
        // Each file is over the limit on disk, and each is said to have been found at another size: what decides is
        // the size known when the file was swapped out, not a look at the file at the run's end.
        var batch = DurableFileBatch()
        for (number, (onDisk, found)) in [(41, 10), (42, 50), (43, 30)].enumerated() {
            try directory.write("r\(number).json", String(repeating: "o", count: onDisk))
            batch.write(Array("new \(number)".utf8), to: directory.file("r\(number).json"), replacedSize: Int64(found))
        }
        try batch.commit(temporaryDirectory: directory.file("tmp"), spares: spares)
        await spares.finishRun()
        let kept = try names(in: spares.directory).map { try directory.read("spares/" + $0).count }
        #expect(kept.sorted() == [41, 43], "the spares found at 10 and 30 bytes are kept, the one found at 50 removed")
    }

    @Test func aRunKeepsSmallSparesForTheNextOneAndRemovesTheRest() async throws {
        let directory = TemporaryDirectory()
        let spares = SpareFiles(directory: directory.file("spares"), retainedCount: 3, retainedMaximumSize: 100)
        var batch = DurableFileBatch()
        for number in 0..<6 {
            try directory.write("r\(number).json", number == 0 ? String(repeating: "x", count: 500) : "small \(number)")
            batch.write(Array("new \(number)".utf8), to: directory.file("r\(number).json"))
        }
        try batch.commit(temporaryDirectory: directory.file("tmp"), spares: spares)
        #expect(try names(in: spares.directory).count == 6)
        await spares.finishRun()
        let kept = try names(in: spares.directory)
        #expect(kept.count == 3)
        for name in kept {
            #expect(try directory.read("spares/" + name).hasPrefix("small"), "the big spare is not kept")
        }

        // A run that needs no spare leaves them alone, even beyond what it would keep: it never lists them.
        try directory.write("spares/spare-extra", "small extra")
        let idle = SpareFiles(
            directory: spares.directory, adoptingRetained: true, retainedCount: 3, retainedMaximumSize: 100)
        await idle.finishRun()
        #expect(try names(in: spares.directory) == (kept + ["spare-extra"]).sorted())
        try FileManager.default.removeItem(atPath: spares.directory + "/spare-extra")

        // The next run adopts them when it first needs one, and a spare removed by hand after that is skipped, not
        // an error.
        let next = SpareFiles(directory: spares.directory, adoptingRetained: true)
        var first = DurableFileBatch()
        first.write(Array("first again".utf8), to: directory.file("r5.json"))
        try first.commit(temporaryDirectory: directory.file("tmp"), spares: next)
        let untaken = try names(in: spares.directory).filter { try directory.read("spares/" + $0).hasPrefix("small") }
        #expect(untaken.count == 2, "one of the three adopted spares was written over and swapped in")
        try FileManager.default.removeItem(atPath: spares.directory + "/" + untaken[0])
        var again = DurableFileBatch()
        for number in 0..<3 { again.write(Array("again \(number)".utf8), to: directory.file("r\(number).json")) }
        try again.commit(temporaryDirectory: directory.file("tmp"), spares: next)
        for number in 0..<3 { #expect(try directory.read("r\(number).json") == "again \(number)") }
        #expect(try directory.read("r5.json") == "first again")
        #expect(
            try names(in: spares.directory).count == 3, "two spares written over and one new file: three swapped out")

        try next.removeAll()
        #expect(try names(in: spares.directory).isEmpty)
    }

    @Test func pushAndPurgeThroughTheStore() async throws {
        let (directory, context) = try makeStore()
        let records: [[String: JSONValue]] = (0..<20).map { ["id": .string("r\($0)"), "version": "v1"] }
        _ = try await context.applySynced(table: "todo", records: try records.map(ServerRecord.init))
        let updated: [[String: JSONValue]] = (0..<20).map { ["id": .string("r\($0)"), "version": "v2"] }
        _ = try await context.applySynced(table: "todo", records: try updated.map(ServerRecord.init))
        await context.spareFiles.finishRun()
        let spares = try names(in: directory.file("store/.tablesync/spares"))
        #expect(spares.count == 20, "the version-1 files are kept as spares")
        #expect(try await context.verify().isEmpty, "spares are not a finding")

        // A new context adopts them: its writes go over them.
        let root = context.layout.root
        await context.close()
        let reopened = try SyncContext(directory: root)
        let sparesBefore = try Set(spares.map { try inode(directory.file("store/.tablesync/spares/" + $0)) })
        let third: [[String: JSONValue]] = (0..<20).map { ["id": .string("r\($0)"), "version": "v3"] }
        _ = try await reopened.applySynced(table: "todo", records: try third.map(ServerRecord.init))
        let recordInodes = try Set((0..<20).map { try inode(directory.file("store/tables/todo/r\($0).json")) })
        // The batch's intent file goes first and takes one spare; every record but one is written over a spare.
        #expect(recordInodes.intersection(sparesBefore).count >= 19)

        // A purge leaves no old content behind.
        try await reopened.purge(table: "todo")
        #expect(try names(in: directory.file("store/.tablesync/spares")).isEmpty)
        #expect(try names(in: directory.file("store/tables/todo")).isEmpty)
    }

    @Test("a staged write-back puts its spares in place, and a spare not used goes back")
    func stagedWriteBack() async throws {
        let (directory, context) = try makeStore()
        defer { withExtendedLifetime(directory) {} }
        let ids = ["r0", "r1", "r2"]
        _ = try await context.applySynced(
            table: "todo", records: try ids.map { try ServerRecord(["id": .string($0), "version": "v1"]) })
        let layout = context.layout
        var sent: [String: SentFile] = [:]
        for id in ids {
            sent[id] = SentFile(
                hash: ContentHash.of(try FileSystem.readFile(layout.recordFile(table: "todo", id: id))))
        }

        var staged: [String] = []
        var stagedInodes: [UInt64] = []
        do {
            var encoded = EncodedRecords(try ids.map { try ServerRecord(["id": .string($0), "version": "v2"]) })
            try encoded.stage(in: context.spareFiles)
            staged = try #require(encoded.staged).unclaimed
            #expect(staged.count == 3)
            for (index, path) in staged.enumerated() {
                #expect(try FileSystem.readFile(path) == encoded.files[index].bytes)
            }
            stagedInodes = try staged.map(inode)
            // r1 is edited by hand after it was sent: its write-back must not replace it.
            try FileSystem.writeNewFile(
                layout.recordFile(table: "todo", id: "r1") + ".new", Array("{\"id\": \"r1\", \"text\": \"mine\"}".utf8))
            try FileSystem.rename(
                layout.recordFile(table: "todo", id: "r1") + ".new", to: layout.recordFile(table: "todo", id: "r1"))

            let outcome = try await context.applySynced(table: "todo", encoded: encoded, guard: .sentContent(sent))
            #expect(outcome.written == 2 && outcome.skipped == ["r1"])
            #expect(try #require(encoded.staged).unclaimed == [staged[1]], "the commit claimed the two it wrote")
            #expect(
                try context.spareFiles.write(
                    Array("next".utf8), batch: context.spareFiles.batch(named: "test"), index: 0) != staged[1],
                "r1's spare is still the staged records' while they live")
        }
        #expect(
            try inode(layout.recordFile(table: "todo", id: "r0")) == stagedInodes[0],
            "the staged spare itself is put in place")
        #expect(try inode(layout.recordFile(table: "todo", id: "r2")) == stagedInodes[2])
        #expect(
            String(decoding: try FileSystem.readFile(layout.recordFile(table: "todo", id: "r1")), as: UTF8.self)
                .contains("mine"))
        // Dropped, the staged records gave r1's spare back (and no other): the next write goes over it.
        #expect(
            try context.spareFiles.write(Array("next".utf8), batch: context.spareFiles.batch(named: "test"), index: 1)
                == staged[1])
    }

    @Test("staged spares a commit never claimed all go back when dropped, and a failed staging loses none")
    func unclaimedStagingGoesBack() throws {
        let directory = TemporaryDirectory()
        let spares = SpareFiles(directory: directory.file("spares"))
        var paths: [String] = []
        do {
            let staged = try StagedSpares(writing: [[1], [2], [3]], into: spares)
            paths = staged.unclaimed
            #expect(staged.slot(1).claim() == paths[1])
            #expect(staged.slot(1).claim() == nil, "a spare is claimed once")
        }
        // The two unclaimed came back; the claimed one did not.
        var taken: [String] = []
        for index in 0..<3 {
            taken.append(try spares.write([9], batch: spares.batch(named: "after"), index: index))
        }
        #expect(Set(taken.prefix(2)) == [paths[0], paths[2]])
        #expect(taken[2] != paths[1], "the third is a new file")

        // A staging that fails halfway keeps none of what it wrote, and loses none: the pool holds a spare and,
        // above it, a directory in a spare's place, which the second write cannot write over.
        let good = taken[0]
        let broken = directory.file("spares/spare-broken")
        try FileSystem.createDirectory(broken)
        spares.keep([broken, good])
        #expect(throws: FileSystemError.self) { try StagedSpares(writing: [[1], [2]], into: spares) }
        #expect(try spares.write([7], batch: spares.batch(named: "last"), index: 0) == good, "the first write's spare")
    }

    @Test(
        "staged batches make their new files in the two directories of spares in turn, and both are adopted and purged")
    func stagedBatchesAlternateDirectories() async throws {
        let directory = TemporaryDirectory()
        let spares = SpareFiles(directory: directory.file("spares"))
        var pages: [EncodedRecords] = []
        for page in 0..<3 {
            var encoded = EncodedRecords(
                try (0..<4).map { try ServerRecord(["id": .string("p\(page)-r\($0)"), "version": "v1"]) })
            try encoded.stage(in: spares)
            pages.append(encoded)
        }
        let stagedFiles = try pages.map { try #require($0.staged).unclaimed }
        let parents = stagedFiles.map { Set($0.map(FileSystem.parentDirectory(of:))) }
        #expect(parents == [[spares.directory], [spares.alternateDirectory], [spares.directory]])
        #expect(spares.directories(holding: stagedFiles[1]) == [spares.alternateDirectory])
        #expect(
            spares.directories(holding: stagedFiles[0] + stagedFiles[1]) == [
                spares.directory, spares.alternateDirectory
            ])
        #expect(spares.directories(holding: []).isEmpty)

        // Kept, they stay on disk in both directories; the next run adopts them from both before it makes a file.
        pages.removeAll() // dropped, the staged records give their spares back
        await spares.finishRun()
        let next = SpareFiles(directory: spares.directory, adoptingRetained: true)
        var taken: Set<String> = []
        for index in 0..<12 {
            taken.insert(try next.write(Array("again \(index)".utf8), batch: next.batch(named: "next"), index: index))
        }
        #expect(taken == Set(stagedFiles.joined()), "every spare of both directories written over, no new file")

        next.keep(Array(taken))
        try next.removeAll()
        #expect(try names(in: spares.directory) == [SpareFiles.alternateDirectoryName])
        #expect(try names(in: spares.alternateDirectory).isEmpty)
    }
}
#endif
