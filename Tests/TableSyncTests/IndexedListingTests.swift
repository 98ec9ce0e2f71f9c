import Foundation
import Testing
import TestSupport
@testable import TableSyncStorage

/// The first step of a scan, alone: a table's listing joined with its stat index, before any record file is read.
@Suite struct IndexedListingTests {
    @Test("the join names the files to read, the entries whose file is gone, and the names that are no record files")
    func joinsListingWithIndex() throws {
        let directory = TemporaryDirectory()
        let layout = StoreLayout(root: directory.path)
        let table = layout.tableDirectory("todo")
        try FileSystem.createDirectory(table)
        for name in ["a", "b", "c"] {
            try FileSystem.writeNewFile(table + "/\(name).json", Array("{\"id\": \"\(name)\"}".utf8))
            // Old enough that the index's own write cannot make its entry racily clean.
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 1_600_000_000)], ofItemAtPath: table + "/\(name).json")
        }
        try FileSystem.writeNewFile(table + "/notes.txt", [])
        try FileSystem.writeNewFile(table + "/.hidden", [])
        try FileSystem.createDirectory(table + "/sub.json")
        func entry(_ name: String, status: FileSystem.Status) -> StatIndex.Entry {
            StatIndex.Entry(
                fileName: name + ".json", id: name, status: status, contentHash: String(repeating: "0", count: 64),
                version: "v1")
        }
        let a = try #require(try FileSystem.status(table + "/a.json"))
        var b = try #require(try FileSystem.status(table + "/b.json"))
        b.size += 1 // the file is not what the index recorded
        var index = StatIndex()
        try index.record(
            [entry("a", status: a), entry("b", status: b), entry("d", status: a)], removed: [], layout: layout,
            table: "todo")

        let joined = try IndexedListing(layout: layout, table: "todo")
        #expect(!joined.indexIsEmpty)
        #expect(joined.listedCount == 3)
        #expect(joined.changed.map(\.name) == ["b.json", "c.json"], "a's stat is vouched for; b's is not; c is new")
        #expect(joined.changed.map { $0.entry?.id } == ["b", nil])
        #expect(joined.changed.map(\.relativePath) == ["tables/todo/b.json", "tables/todo/c.json"])
        #expect(joined.unlisted.map(\.fileName) == ["d.json"])
        #expect(
            joined.problems.map(\.path).sorted() == ["tables/todo/notes.txt", "tables/todo/sub.json"],
            "hidden names are passed over in silence")
        #expect(try joined.isListed("a.json") && joined.isListed("c.json"))
        #expect(try !joined.isListed("d.json") && !joined.isListed("sub.json") && !joined.isListed("notes.txt"))
        // Asked in name order with a hint kept, as a clone's walk of git's index asks, and out of order: the same.
        var hint = 0
        for name in ["0.json", "a.json", "b.json", "bb.json", "c.json", "a.json", "d.json", "c.json", "z.json"] {
            var bytes = name
            let hinted = try bytes.withUTF8 { try joined.isListed($0, hint: &hint) }
            #expect(try hinted == joined.isListed(name), "\(name)")
        }

        // Limited to the names a watch's events gave, the join agrees on them and leaves the others unlisted-as-is.
        let named = try IndexedListing(
            layout: layout, table: "todo", names: ["a.json", "b.json", "d.json", "sub.json", "notes.txt"])
        #expect(named.listedCount == 2, "a and b: the record files among the names")
        #expect(named.changed.map(\.name) == ["b.json"], "a's stat is vouched for; c was not named")
        #expect(named.unlisted.map(\.fileName) == ["d.json"])
        #expect(named.problems.map(\.path).sorted() == ["tables/todo/notes.txt", "tables/todo/sub.json"])
        #expect(try named.isListed("a.json") && !named.isListed("d.json"))
        #expect(try named.isListed("c.json"), "a name not given is looked for on disk")
        #expect(throws: FileSystemError.self, "a file that cannot be looked at is not taken for one deleted") {
            try named.isListed(String(repeating: "x", count: 300) + ".json")
        }

        let unindexed = try IndexedListing(layout: layout, table: "todo-elsewhere")
        #expect(unindexed.indexIsEmpty && unindexed.listedCount == 0 && unindexed.unlisted.isEmpty)
    }
}
