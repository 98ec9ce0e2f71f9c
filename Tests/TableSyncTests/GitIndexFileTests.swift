import Foundation
import Testing
import TestSupport

@testable import TableSyncStorage

/// ``GitIndexFile`` and ``ContentHash`` against the real `git`: what a scan takes from git's index instead of reading
/// a file must be exactly what git would say of it (`git rev-parse`, `git hash-object`, `git write-tree`).
@Suite("Git's index, read for one directory")
struct GitIndexFileTests {
    /// A work tree with `store/tables/todo/` (a few files, one with a long name), a file in a neighbouring table
    /// and one whose name extends the directory's, all committed.
    struct Repository {
        let directory = TemporaryDirectory()
        let environment = GitWorld.environment(home: "/nonexistent")
        static let names = ["a.json", "b.json", "c%20d.json", String(repeating: "long", count: 30) + ".json"]

        init() async throws {
            for (number, name) in Self.names.enumerated() {
                try directory.write("store/tables/todo/\(name)", #"{"id": "\#(number)", "text": "item \#(number)"}"#)
            }
            try directory.write("store/tables/other/z.json", "{}")
            try directory.write("store/tables/todo.json", "{}")
            try await git("init", "-q", "-b", "main")
            try await git("add", "-A")
            try await git("commit", "-q", "-m", "records")
        }

        @discardableResult
        func git(_ arguments: String...) async throws -> String {
            let run = try await runProgram(
                "/usr/bin/env", ["git", "-C", directory.path] + arguments, environment: environment)
            #expect(run.status == 0, "git \(arguments): \(run.stderr)")
            return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Git's index as read for the table's directory, after git refreshed it (`git status` rewrites entries it
        /// found racily clean once they are not).
        func index() async throws -> GitIndexFile? {
            try await Task.sleep(for: .milliseconds(20))
            try await git("status", "--porcelain")
            return try GitIndexFile.read(path: directory.file(".git/index"), directory: "store/tables/todo/")
        }

        func vouchedHash(_ index: GitIndexFile, _ name: String) throws -> String? {
            let status = try #require(try FileSystem.status(directory.file("store/tables/todo/\(name)")))
            var name = name
            return name.withUTF8 { index.vouchedHash(for: $0, status: status) }
        }
    }

    @Test("in index formats 2, 3 and 4, each file's blob and the directory's tree are what git names them")
    func formats() async throws {
        let repository = try await Repository()
        let tree = try await repository.git("rev-parse", "HEAD:store/tables/todo")
        for version in ["2", "3", "4"] {
            try await repository.git("update-index", "--index-version", version)
            if version == "3" {
                try await repository.git("update-index", "--skip-worktree", "store/tables/todo/b.json")
            }
            let index = try #require(try await repository.index(), "format \(version)")
            #expect(index.stagedTree == tree, "format \(version)")
            for name in Repository.names {
                let blob = try await repository.git("rev-parse", "HEAD:store/tables/todo/\(name)")
                let bytes = try FileSystem.readFile(repository.directory.file("store/tables/todo/\(name)"))
                #expect(ContentHash.of(bytes) == blob)
                let expected = version == "3" && name == "b.json" ? nil : blob
                #expect(try repository.vouchedHash(index, name) == expected, "format \(version), \(name)")
            }
            #expect(index.files.count == Repository.names.count, "only the directory's files, not todo.json's")
            if version == "3" {
                try await repository.git("update-index", "--no-skip-worktree", "store/tables/todo/b.json")
            }
        }
    }

    @Test("a changed file, one marked assume-unchanged, and every racily clean entry vouch for nothing")
    func distrusted() async throws {
        let repository = try await Repository()
        try repository.directory.write("store/tables/todo/a.json", #"{"id": "0", "text": "edited"}"#)
        try await repository.git("update-index", "--assume-unchanged", "store/tables/todo/b.json")
        let index = try #require(try await repository.index())
        #expect(try repository.vouchedHash(index, "a.json") == nil)
        #expect(try repository.vouchedHash(index, "b.json") == nil)
        #expect(try repository.vouchedHash(index, "c%20d.json") != nil)
        // Asked in name order with one search position kept, as a scan's walk asks: the same answers, for a name
        // git's index lacks too (given another file's status).
        let asked = (Repository.names + ["b0.json", "zz.json"]).sorted(by: StatIndexLine.precedes)
        var position = 0
        for name in asked {
            let file = Repository.names.contains(name) ? name : "c%20d.json"
            let status = try #require(try FileSystem.status(repository.directory.file("store/tables/todo/\(file)")))
            var bytes = name
            let alone = bytes.withUTF8 { index.vouchedHash(for: $0, status: status) }
            let walked = bytes.withUTF8 {
                index.vouchedEntry(for: $0, status: status, searchingFrom: &position).map(index.blobHash(at:))
            }
            #expect(walked == alone, "\(name)")
        }
        #expect(
            index.stagedTree == (try await repository.git("rev-parse", "HEAD:store/tables/todo")),
            "the tree is the staged one, whatever the work tree holds")
        // An index file written no later than its entries were modified: git itself would read every file.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_000_000_000)],
            ofItemAtPath: repository.directory.file(".git/index"))
        let racy = try #require(
            try GitIndexFile.read(path: repository.directory.file(".git/index"), directory: "store/tables/todo/"))
        for name in Repository.names { #expect(try repository.vouchedHash(racy, name) == nil, "\(name)") }
    }

    @Test("the tree of a staged change is git's own (write-tree); a subdirectory makes none; a split index is not read")
    func stagedSubdirectorySplit() async throws {
        let repository = try await Repository()
        try repository.directory.write("store/tables/todo/e.json", #"{"id": "e"}"#)
        try await repository.git("add", "store/tables/todo/e.json")
        let staged = try #require(try await repository.index())
        #expect(staged.stagedTree == (try await repository.git("write-tree", "--prefix=store/tables/todo/")))

        try repository.directory.write("store/tables/todo/sub/x.json", "{}")
        try await repository.git("add", "-A")
        #expect(try #require(try await repository.index()).stagedTree == nil)

        try await repository.git("update-index", "--split-index")
        #expect(try await repository.index() == nil)
    }

    @Test(
        """
        the tree a stat index makes is the one git commits for those files, from its log and its runs; an entry \
        edited while sent or without a version makes none
        """)
    func syncedTree() async throws {
        let repository = try await Repository()
        let layout = StoreLayout(root: repository.directory.path + "/store")
        var entries: [StatIndex.Entry] = []
        for (number, name) in Repository.names.enumerated() {
            let path = repository.directory.file("store/tables/todo/\(name)")
            entries.append(
                StatIndex.Entry(
                    fileName: name, id: "\(number)", status: try #require(try FileSystem.status(path)),
                    contentHash: ContentHash.of(try FileSystem.readFile(path)), version: number == 1 ? nil : "v1",
                    versionIsInBlob: number == 1))
        }
        var index = StatIndex()
        index.flushLines = 2
        try index.record(Array(entries[..<2]), removed: [], layout: layout, table: "todo")
        try index.record(Array(entries[2...]), removed: [], layout: layout, table: "todo")
        try index.record([entries[0]], removed: [], layout: layout, table: "todo")
        let loaded = try StatIndex.load(layout: layout, table: "todo")
        #expect(loaded.runs.count >= 1, "some entries are in runs")
        #expect(try loaded.syncedTreeID() == (try await repository.git("rev-parse", "HEAD:store/tables/todo")))

        var unsynced = entries[2]
        unsynced.contentHash = StatIndex.Entry.editedWhileSent
        index = loaded
        try index.record([unsynced], removed: [], layout: layout, table: "todo")
        #expect(try index.syncedTreeID() == nil)
        unsynced = entries[2]
        unsynced.version = nil
        try index.record([unsynced], removed: [], layout: layout, table: "todo")
        #expect(try index.syncedTreeID() == nil)
    }

    @Test("a content hash is git's blob id of the bytes")
    func contentHash() async throws {
        let repository = try await Repository()
        for text in ["", "{}", "{\"id\": \"a\"}\n", String(repeating: "é", count: 5_000)] {
            try repository.directory.write("blob", text)
            #expect(
                ContentHash.of(Array(text.utf8)) == (try await repository.git("hash-object", "blob")),
                "\(text.prefix(20))")
        }
        #expect(ContentHash.rawBytes(of: ContentHash.of([])).map(ContentHash.hex) == ContentHash.of([]))
        #expect(ContentHash.rawBytes(of: "edited-while-sent") == nil)
    }
}
