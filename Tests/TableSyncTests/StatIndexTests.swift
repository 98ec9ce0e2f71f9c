import Foundation
import Testing
import TestSupport
@testable import TableSync

/// The stat index file round-trips, later lines win, removals apply, and anything this version did not write
/// drops the whole index (a cache: rebuilding it only costs hashing) instead of trusting part of it.
@Suite struct StatIndexTests {
    static func entry(_ name: String, size: Int64 = 10, version: String? = "v1") -> StatIndex.Entry {
        StatIndex.Entry(fileName: name + ".json", id: name, size: size, modifiedNanoseconds: -5, changedNanoseconds: 1_700_000_000_123_456_789,
                        inode: UInt64.max, contentHash: String(repeating: "ab", count: 32), version: version)
    }

    func load(_ text: String) throws -> StatIndex {
        let directory = TemporaryDirectory()
        let layout = StoreLayout(root: directory.path)
        try FileManager.default.createDirectory(atPath: layout.indexDirectory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: layout.indexFile("todo")))
        return try StatIndex.load(layout: layout, table: "todo")
    }

    @Test("entries written by record(_:) load back, with later lines and removals applied")
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        let layout = StoreLayout(root: directory.path)
        var index = StatIndex()
        try index.record([Self.entry("a"), Self.entry("b", version: nil), Self.entry("c", version: "with\ttab")], removed: [],
                         layout: layout, table: "todo")
        try index.record([Self.entry("a", size: 99)], removed: ["b.json"], layout: layout, table: "todo")
        let loaded = try StatIndex.load(layout: layout, table: "todo")
        #expect(loaded.entries == index.entries)
        #expect(loaded.entries["a.json"]?.size == 99, "the later line wins")
        #expect(loaded.entries["b.json"] == nil, "the removal applies")
        #expect(loaded.entries["c.json"]?.version == "with\ttab", "the version is the rest of the line")
        #expect(loaded.lineCount == 6, "header, three entries, one update, one removal")
    }

    @Test("asked by name, the index vouches for a file only when its entry matches and is not racily clean")
    func unchangedByName() {
        let entry = Self.entry("a")
        var index = StatIndex(entries: ["a.json": entry], loadedModifiedNanoseconds: 0)
        let status = FileSystem.Status(size: entry.size, modifiedNanoseconds: entry.modifiedNanoseconds,
                                       changedNanoseconds: entry.changedNanoseconds, inode: entry.inode, isDirectory: false, isRegularFile: true)
        #expect(index.isUnchanged(name: "a.json", status: status) == true)
        var touched = status
        touched.changedNanoseconds += 1
        #expect(index.isUnchanged(name: "a.json", status: touched) == false)
        #expect(index.isUnchanged(name: "b.json", status: status) == nil, "no entry")
        index.loadedModifiedNanoseconds = entry.modifiedNanoseconds
        #expect(index.isUnchanged(name: "a.json", status: status) == false, "racily clean: changed in the index's own tick")
    }

    @Test("an index this version did not write is dropped whole", arguments: [
        "",
        "tablesync-index 2\n",
        "tablesync-index 1\na.json\ta\t10\t1\t2\t3\thash\n",                        // seven fields
        "tablesync-index 1\na.json\ta\tten\t1\t2\t3\thash\tv1\n",                  // not a number
        "tablesync-index 1\na.json\ta\t10\t1\t2\t-3\thash\tv1\n",                  // negative inode
        "tablesync-index 1\na.json\ta\t99999999999999999999\t1\t2\t3\thash\tv1\n", // overflows
        "tablesync-index 1\na.json\ta\t-\t1\t2\t3\thash\tv1\n",                    // a sign alone
    ])
    func dropped(_ text: String) throws {
        #expect(try load(text).entries.isEmpty)
    }

    @Test("blank lines are skipped")
    func blankLines() throws {
        let index = try load("tablesync-index 1\n\na.json\ta\t10\t-1\t2\t3\thash\tv1\n\n")
        #expect(index.entries["a.json"] == StatIndex.Entry(fileName: "a.json", id: "a", size: 10, modifiedNanoseconds: -1,
                                                             changedNanoseconds: 2, inode: 3, contentHash: "hash", version: "v1"))
    }
}
