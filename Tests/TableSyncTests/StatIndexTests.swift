import Foundation
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// The stat index on disk: a log of recent lines and sorted runs read by `pread`. Entries written by `record`
/// read back through lookups and the sorted walk, whatever flushes and merges happened between; each state a
/// crash can leave reads back as the index it stands for; anything this version did not write drops the whole
/// index (a cache: rebuilding it only costs reading files) instead of trusting part of it.
@Suite struct StatIndexTests {
    static func entry(_ name: String, size: Int64 = 10, version: String? = "v1") -> StatIndex.Entry {
        StatIndex.Entry(
            fileName: name + ".json", id: name, size: size, modifiedNanoseconds: -5,
            changedNanoseconds: 1_700_000_000_123_456_789,
            inode: UInt64.max, contentHash: String(repeating: "ab", count: 32), version: version)
    }

    /// A store directory with an index of `table` "todo", and the model of what the index must say.
    struct Fixture {
        let directory = TemporaryDirectory()
        var layout: StoreLayout { StoreLayout(root: directory.path) }
        var model: [String: StatIndex.Entry] = [:]
        var index = StatIndex()

        init(flushLines: Int) {
            index.flushLines = flushLines
        }

        mutating func record(_ updated: [StatIndex.Entry], removed: [String] = []) throws {
            try index.record(updated, removed: removed, layout: layout, table: "todo")
            for entry in updated { model[entry.fileName] = entry }
            for name in removed { model[name] = nil }
        }

        func load(flushLines: Int = 16_384) throws -> StatIndex {
            var index = try StatIndex.load(layout: layout, table: "todo")
            index.flushLines = flushLines
            return index
        }

        func files() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: layout.indexDirectory).sorted()
        }

        func path(_ name: String) -> String { layout.indexDirectory + "/" + name }

        /// Every entry of `index` in order, through the sorted walk.
        static func walk(_ index: StatIndex) throws -> [StatIndex.Entry] {
            var lines = try index.sortedLines()
            var all: [StatIndex.Entry] = []
            while try lines.step() {
                if let entry = try lines.item().entry { all.append(entry) }
            }
            return all
        }

        /// `index` says exactly what the model says, by lookup and by walk. The model's entries are older than any
        /// index file (modified at -5 ns), so none comes back racily clean.
        func expectMatches(_ index: StatIndex, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(
                try Self.walk(index) == model.values.sorted { StatIndexLine.precedes($0.fileName, $1.fileName) },
                sourceLocation: sourceLocation)
            for (name, entry) in model {
                #expect(try index.entry(named: name) == entry, sourceLocation: sourceLocation)
            }
        }
    }

    @Test(
        "entries and removals read back by lookup and in order, later lines winning, the version the rest of the line")
    func roundTrip() throws {
        var fixture = Fixture(flushLines: 100)
        try fixture.record([Self.entry("a"), Self.entry("b", version: nil), Self.entry("c", version: "with\ttab")])
        try fixture.record([Self.entry("a", size: 99)], removed: ["b.json"])
        let loaded = try fixture.load()
        try fixture.expectMatches(loaded)
        #expect(try loaded.entry(named: "b.json") == nil, "the removal applies")
        #expect(try loaded.entry(named: "c.json")?.version == "with\ttab")
        #expect(loaded.logLines == 5, "three entries, one update, one removal")
        #expect(try fixture.files() == ["todo.index"], "no run below the flush size")
    }

    @Test("random writes across many flushes and merges: the index always says what was recorded, with few runs")
    func flushesAndMerges() throws {
        var fixture = Fixture(flushLines: 16)
        var generator = SeededGenerator(seed: 14)
        for step in 0..<120 {
            var updated: [StatIndex.Entry] = []
            var removed: [String] = []
            for _ in 0..<Int.random(in: 1...9, using: &generator) {
                let name = "r\(Int.random(in: 0..<300, using: &generator))"
                if Bool.random(using: &generator) || Int.random(in: 0..<4, using: &generator) > 0 {
                    updated.append(Self.entry(name, size: Int64(step)))
                } else {
                    removed.append(name + ".json")
                }
            }
            // One record call names each file once, as the writer's calls do.
            let names = Set(removed)
            updated = Dictionary(updated.filter { !names.contains($0.fileName) }.map { ($0.fileName, $0) }) { $1 }
                .values.sorted { $0.fileName < $1.fileName }
            try fixture.record(updated, removed: removed)
            if step % 10 == 9 {
                try fixture.expectMatches(fixture.index)
                try fixture.expectMatches(try fixture.load(flushLines: 16))
            }
        }
        let loaded = try fixture.load(flushLines: 16)
        #expect(loaded.runs.count >= 1 && loaded.runs.count <= 8, "runs: \(loaded.runs.map(\.sequences))")
        let counts = loaded.runs.map(\.itemCount)
        #expect(IndexRunPlan.mergeCount(itemCounts: counts) == 0, "merged as far as the rule says: \(counts)")
        // Continuing from a loaded index keeps its sequences and files in step.
        var continued = loaded
        try continued.record((0..<40).map { Self.entry("n\($0)") }, removed: [], layout: fixture.layout, table: "todo")
        for index in 0..<40 { fixture.model["n\(index).json"] = Self.entry("n\(index)") }
        try fixture.expectMatches(try fixture.load())
    }

    @Test(
        """
        one call with more lines than a log holds is written as a run of its own, after the log's lines: the log stays \
        within its bound, and removals apply to older runs
        """
    )
    func oversizedRecord() throws {
        var fixture = Fixture(flushLines: 16)
        try fixture.record((0..<40).map { Self.entry("old\($0)") }) // runs, then a log of a few lines
        try fixture.record([Self.entry("inlog")], removed: ["old0.json"])
        #expect(fixture.index.logLines > 0, "the next call has log lines to move first")
        let runsBefore = fixture.index.runs.count
        // Unsorted, a name twice, a removal of an entry in an older run and of one in the log.
        try fixture.record(
            (0..<50).reversed().map { Self.entry("a\($0)") } + [Self.entry("a7", size: 77)],
            removed: ["old1.json", "inlog.json"] + (0..<20).map { "gone\($0).json" })
        #expect(fixture.index.logLines == 0 && fixture.index.runs.count <= runsBefore + 2)
        try fixture.expectMatches(fixture.index)
        let loaded = try fixture.load(flushLines: 16)
        #expect(loaded.logLines == 0)
        #expect(try loaded.entry(named: "a7.json")?.size == 77, "the later line of a name wins")
        #expect(try loaded.entry(named: "old1.json") == nil && loaded.entry(named: "inlog.json") == nil)
        try fixture.expectMatches(loaded)
        // The log goes on from the runs' sequence.
        var continued = loaded
        try continued.record([Self.entry("after")], removed: [], layout: fixture.layout, table: "todo")
        fixture.model["after.json"] = Self.entry("after")
        try fixture.expectMatches(try fixture.load(flushLines: 16))
    }

    @Test("a whole table indexed at once, in order, on an empty index: one run, and no line through the log")
    func wholeTableAtOnce() throws {
        var fixture = Fixture(flushLines: 16)
        let entries = (0..<1_000).map { Self.entry(String(format: "r%04d", $0)) }
        try fixture.record(entries)
        #expect(try fixture.files() == ["todo.1-1.run"])
        let loaded = try fixture.load(flushLines: 16)
        #expect(loaded.runs.map(\.itemCount) == [1_000])
        try fixture.expectMatches(loaded)
    }

    @Test("two lists of entries in name order merge in name order, by bytes (`B` before `a`), none lost")
    func mergedInNameOrder() {
        let first = ["B", "a", "c", "e"].map { Self.entry($0) }
        let second = ["a1", "b", "d", "f", "g"].map { Self.entry($0) }
        let merged = StatIndex.merged(first, second)
        #expect(merged.map(\.fileName) == ["B", "a", "a1", "b", "c", "d", "e", "f", "g"].map { $0 + ".json" })
        #expect(StatIndex.merged([], second) == second && StatIndex.merged(first, []) == first)
    }

    @Test("the lines of a call written as a run: in name order, one per name, a removal winning, removals kept on ask")
    func sortedLinesRule() {
        let a = Self.entry("a")
        let b = Self.entry("b")
        #expect(StatIndex.sortedLines([a, b], removed: [], keepingRemovals: false) == nil, "in order: taken as it is")
        #expect(StatIndex.sortedLines([b, a, b], removed: [], keepingRemovals: false)?.map(\.entry) == [a, b])
        #expect(StatIndex.sortedLines([a, a], removed: [], keepingRemovals: false)?.map(\.entry) == [a])
        #expect(
            StatIndex.sortedLines([b, a], removed: ["a.json", "c.json"], keepingRemovals: true)
                == [
                    StatIndexLine.Item(fileName: "a.json", entry: nil),
                    StatIndexLine.Item(fileName: "b.json", entry: b),
                    StatIndexLine.Item(fileName: "c.json", entry: nil)
                ])
        #expect(
            StatIndex.sortedLines([b, a], removed: ["a.json"], keepingRemovals: false)?.map(\.fileName) == ["b.json"])
    }

    @Test("a merge that reaches the oldest run drops the removals, with the entries they removed")
    func removalsInRuns() throws {
        var fixture = Fixture(flushLines: 4)
        try fixture.record((0..<4).map { Self.entry("a\($0)") })
        // a0…a3 flushed: run 1.
        try fixture.record([Self.entry("x0"), Self.entry("x1")], removed: ["a0.json", "a1.json"])
        #expect(try fixture.load().runs.count == 1)
        try fixture.record([Self.entry("y0")]) // run 2 (two removals, x0, x1), merged with 1
        let loaded = try fixture.load()
        try fixture.expectMatches(loaded)
        #expect(loaded.runs.map(\.sequences) == [1...2])
        #expect(loaded.runs.first?.itemCount == 4, "a2, a3, x0, x1: no removal left")
    }

    // MARK: - What a crash leaves

    @Test("dying between a flush's run and its log rewrite: the old log's lines are all in the run, and it is ignored")
    func staleLog() throws {
        var fixture = Fixture(flushLines: 8)
        try fixture.record((0..<8).map { Self.entry("a\($0)") })
        let oldLog = try Data(contentsOf: URL(fileURLWithPath: fixture.path("todo.index")))
        try fixture.record([Self.entry("b0")], removed: ["a3.json"]) // flush: run 1, then a new log
        #expect(try fixture.files().contains("todo.1-1.run"))
        try oldLog.write(to: URL(fileURLWithPath: fixture.path("todo.index")))
        // What the index held when the run was in place: a0…a7.
        var expected = fixture
        expected.model = Dictionary(uniqueKeysWithValues: (0..<8).map { ("a\($0).json", Self.entry("a\($0)")) })
        var loaded = try fixture.load(flushLines: 8)
        try expected.expectMatches(loaded)
        try loaded.record([Self.entry("c0")], removed: [], layout: fixture.layout, table: "todo")
        expected.model["c0.json"] = Self.entry("c0")
        try expected.expectMatches(try fixture.load())
    }

    @Test(
        "dying after a merge's run is in place but before its inputs are removed: the inputs are ignored, then removed")
    func replacedRunsLeft() throws {
        var fixture = Fixture(flushLines: 4)
        try fixture.record((0..<4).map { Self.entry("a\($0)") })
        try fixture.record([Self.entry("a0", size: 1)]) // run 1: a0…a3
        let run1 = try Data(contentsOf: URL(fileURLWithPath: fixture.path("todo.1-1.run")))
        try fixture.record((0..<4).map { Self.entry("b\($0)") }) // run 2: a0 again
        try fixture.record([Self.entry("c0")]) // run 3: b0…b3; 1, 2 and 3 merge
        let runs = try fixture.files().filter { $0.hasSuffix(".run") }
        #expect(runs == ["todo.1-3.run"])
        try run1.write(to: URL(fileURLWithPath: fixture.path("todo.1-1.run")))
        var loaded = try fixture.load()
        try fixture.expectMatches(loaded)
        #expect(try loaded.entry(named: "a0.json")?.size == 1, "the newer line of the merged run, not the old run's")
        try loaded.record([Self.entry("d0")], removed: [], layout: fixture.layout, table: "todo")
        fixture.model["d0.json"] = Self.entry("d0")
        #expect(try fixture.files() == ["todo.1-3.run", "todo.index"], "the replaced run is removed by the next write")
        try fixture.expectMatches(try fixture.load())
    }

    @Test("a log whose last line was torn keeps its whole lines; the next write rewrites it")
    func tornLog() throws {
        var fixture = Fixture(flushLines: 100)
        try fixture.record([Self.entry("a"), Self.entry("b")])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: fixture.path("todo.index")))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("c.json\tc\t1".utf8))
        try handle.close()
        var loaded = try fixture.load()
        try fixture.expectMatches(loaded)
        try loaded.record([Self.entry("d")], removed: [], layout: fixture.layout, table: "todo")
        fixture.model["d.json"] = Self.entry("d")
        try fixture.expectMatches(try fixture.load())
        let text = try String(contentsOfFile: fixture.path("todo.index"), encoding: .utf8)
        #expect(!text.contains("c.json"), "the torn line is gone")
    }

    @Test(
        "a damaged run or overlapping runs drop the whole index, and its files go at the next write",
        arguments: ["truncated", "overlap"])
    func damagedRuns(_ damage: String) throws {
        var fixture = Fixture(flushLines: 4)
        try fixture.record((0..<4).map { Self.entry("a\($0)") })
        try fixture.record([Self.entry("b0")]) // run 1
        let run = fixture.path("todo.1-1.run")
        if damage == "truncated" {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: run))
            try bytes.prefix(bytes.count - 10).write(to: URL(fileURLWithPath: run))
        } else {
            try FileManager.default.copyItem(atPath: run, toPath: fixture.path("todo.2-3.run"))
            try FileManager.default.moveItem(atPath: run, toPath: fixture.path("todo.1-2.run"))
        }
        var loaded = try fixture.load()
        #expect(try Fixture.walk(loaded).isEmpty)
        #expect(try loaded.entry(named: "a0.json") == nil && loaded.entry(named: "b0.json") == nil)
        try loaded.record([Self.entry("c0")], removed: [], layout: fixture.layout, table: "todo")
        #expect(try fixture.files() == ["todo.index"])
        fixture.model = ["c0.json": Self.entry("c0")]
        try fixture.expectMatches(try fixture.load())
    }

    @Test("a line damaged inside a run is an error that names the run file")
    func damagedRunLine() throws {
        var fixture = Fixture(flushLines: 40)
        try fixture.record((0..<40).map { Self.entry("a\($0)") })
        try fixture.record([Self.entry("b0")]) // run 1
        let run = fixture.path("todo.1-1.run")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: run))
        let line = bytes.range(of: Data("a12.json\ta12\t10".utf8))!
        bytes.replaceSubrange(line, with: Data("a12.json\ta12\tXX".utf8))
        try bytes.write(to: URL(fileURLWithPath: run))
        let loaded = try fixture.load()
        #expect(throws: StoreError.self) { try Fixture.walk(loaded) }
        do {
            _ = try Fixture.walk(loaded)
        } catch let error as StoreError {
            #expect(error.description.contains("todo.1-1.run"), "\(error)")
        }
        #expect(throws: StoreError.self) { try loaded.entry(named: "a12.json") }
        #expect(try loaded.entry(named: "a1.json") == Self.entry("a1"), "the other lines still read")
    }

    @Test(
        """
        an index of an earlier format (content hashes by SHA-256: a log `tablesync-index 1` or `2`, runs \
        `tablesync-index-run 1`) is dropped, and the next write replaces its files
        """)
    func earlierFormats() throws {
        let fixture = Fixture(flushLines: 3)
        try FileManager.default.createDirectory(
            atPath: fixture.layout.indexDirectory, withIntermediateDirectories: true)
        let line = "a.json\ta\t10\t1\t2\t3\t\(String(repeating: "ab", count: 32))\tv1\n"
        for header in ["tablesync-index 1", "tablesync-index 2 0"] {
            try Data((header + "\n" + line).utf8).write(to: URL(fileURLWithPath: fixture.path("todo.index")))
            #expect(try Fixture.walk(try fixture.load()).isEmpty, "\(header)")
        }
        try Data("tablesync-index-run 1\n\(line)".utf8).write(to: URL(fileURLWithPath: fixture.path("todo.1-1.run")))
        var loaded = try fixture.load(flushLines: 3)
        #expect(try Fixture.walk(loaded).isEmpty)
        try loaded.record([Self.entry("e")], removed: [], layout: fixture.layout, table: "todo")
        #expect(try fixture.files() == ["todo.index"])
        #expect(
            try String(contentsOfFile: fixture.path("todo.index"), encoding: .utf8).hasPrefix("tablesync-index 3 1\n"))
        #expect(try fixture.load().entry(named: "e.json") == Self.entry("e"))
    }

    @Test("an entry's line keeps where its version is: in the line (any text but a newline, or none) or in its blob")
    func versionPlaces() throws {
        let hash = ContentHash.of(Array("{}".utf8))
        let entries = [
            StatIndex.Entry(
                fileName: "a.json", id: "a", size: 2, modifiedNanoseconds: 5, changedNanoseconds: 6, inode: 7,
                contentHash: hash, version: "v\t1"),
            StatIndex.Entry(
                fileName: "b.json", id: "b", size: 2, modifiedNanoseconds: 5, changedNanoseconds: 6, inode: 7,
                contentHash: hash, version: nil),
            StatIndex.Entry(
                fileName: "c.json", id: "c", size: 2, modifiedNanoseconds: 5, changedNanoseconds: 6, inode: 7,
                contentHash: hash, version: nil, versionIsInBlob: true)
        ]
        for entry in entries {
            var bytes: [UInt8] = []
            StatIndexLine.encode(StatIndexLine.Item(fileName: entry.fileName, entry: entry), to: &bytes)
            let parsed = bytes.dropLast().withUnsafeBufferPointer { StatIndexLine.parse($0) }
            #expect(parsed?.entry == entry, "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(
            Array("c.json\tc\t2\t5\t6\t7\t\(hash)\tb\t\n".utf8).withUnsafeBufferPointer {
                StatIndexLine.parse(UnsafeBufferPointer(rebasing: $0.dropLast()))
            }?.entry?.versionIsInBlob == true)
    }

    @Test(
        "a log this version did not write drops the whole index",
        arguments: [
            "",
            "tablesync-index 4\n",
            "tablesync-index 3\n",
            "tablesync-index 3 x\n",
            "tablesync-index 3 0\na.json\ta\t10\t1\t2\t3\thash\tv1\n", // eight fields: the line of format 2
            "tablesync-index 3 0\na.json\ta\t10\t1\t2\t3\thash\tx\tv1\n", // neither v nor b
            "tablesync-index 3 0\na.json\ta\tten\t1\t2\t3\thash\tv\tv1\n", // not a number
            "tablesync-index 3 0\na.json\ta\t10\t1\t2\t-3\thash\tv\tv1\n", // negative inode
            "tablesync-index 3 0\na.json\ta\t99999999999999999999\t1\t2\t3\thash\tv\tv1\n", // overflows
            "tablesync-index 3 0\na.json\ta\t-\t1\t2\t3\thash\tv\tv1\n", // a sign alone
            "tablesync-index 3 0\n\ta\t10\t1\t2\t3\thash\tv\tv1\n" // no name
        ])
    func dropped(_ text: String) throws {
        let fixture = Fixture(flushLines: 100)
        try FileManager.default.createDirectory(
            atPath: fixture.layout.indexDirectory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: fixture.path("todo.index")))
        #expect(try Fixture.walk(try fixture.load()).isEmpty)
    }

    @Test("blank lines are skipped")
    func blankLines() throws {
        let fixture = Fixture(flushLines: 100)
        try FileManager.default.createDirectory(
            atPath: fixture.layout.indexDirectory, withIntermediateDirectories: true)
        try Data("tablesync-index 3 0\n\na.json\ta\t10\t-1\t2\t3\thash\tv\tv1\n\n".utf8).write(
            to: URL(fileURLWithPath: fixture.path("todo.index")))
        #expect(
            try fixture.load().entry(named: "a.json")
                == StatIndex.Entry(
                    fileName: "a.json", id: "a", size: 10, modifiedNanoseconds: -1, changedNanoseconds: 2, inode: 3,
                    contentHash: "hash", version: "v1"))
    }

    // MARK: - Racily clean entries

    @Test(
        """
        an entry modified no earlier than the file holding it comes back with its stat unknown, from the log and from \
        a run
        """
    )
    func racilyClean() throws {
        var fixture = Fixture(flushLines: 2)
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000_000)
        var racy = Self.entry("racy")
        racy.modifiedNanoseconds = now + 3_600_000_000_000 // an hour ahead of every index file
        try fixture.record([racy, Self.entry("old")])
        let fromLog = try fixture.load()
        #expect(try fromLog.entry(named: "racy.json")?.size == StatIndex.Entry.unknownSize)
        #expect(try fromLog.entry(named: "old.json") == Self.entry("old"))
        let status = FileSystem.Status(
            size: racy.size, modifiedNanoseconds: racy.modifiedNanoseconds, changedNanoseconds: racy.changedNanoseconds,
            inode: racy.inode, isDirectory: false, isRegularFile: true)
        #expect(
            try fromLog.entry(named: "racy.json")?.matches(status) == false, "a racily clean entry vouches for no file")
        // The scan's way: the line's fields read in place, judged against the same rule.
        var lines = try fromLog.sortedLines()
        var vouched: [String: Bool] = [:]
        while try lines.step() {
            let entry = try #require(try lines.item().entry)
            var own = status
            (own.size, own.modifiedNanoseconds) = (Self.entry("old").size, Self.entry("old").modifiedNanoseconds)
            vouched[entry.fileName] = lines.vouches(for: entry.fileName == "racy.json" ? status : own)
        }
        #expect(vouched == ["racy.json": false, "old.json": true])
        try fixture.record([Self.entry("new")]) // flushes both into run 1
        let fromRun = try fixture.load()
        #expect(try fromRun.entry(named: "racy.json")?.size == StatIndex.Entry.unknownSize)
        #expect(
            try Fixture.walk(fromRun).first { $0.fileName == "racy.json" }?.contentHash == racy.contentHash,
            "its hash still decides")
    }

    @Test("a call written as a run of its own writes its racily clean entries with their stat unknown")
    func racilyCleanInOwnRun() throws {
        var fixture = Fixture(flushLines: 2)
        var racy = Self.entry("racy")
        racy.modifiedNanoseconds = Int64(Date().timeIntervalSince1970 * 1_000_000_000) + 3_600_000_000_000
        try fixture.record([Self.entry("a"), racy, Self.entry("z")])
        // The run's filter is binary: its lines are read as text, the rest does not matter here.
        let run = String(
            decoding: try Data(contentsOf: URL(fileURLWithPath: fixture.path("todo.1-1.run"))), as: UTF8.self)
        let line = try #require(run.split(separator: "\n").first { $0.hasPrefix("racy.json\t") })
        // Written so, not only judged so when read: a merge copies a run's lines as they are.
        #expect(line.split(separator: "\t")[2] == "\(StatIndex.Entry.unknownSize)")
        #expect(try fixture.load().entry(named: "a.json") == Self.entry("a"))
    }

    // MARK: - Pure parts

    @Test("live runs: a run within another is replaced; runs overlapping otherwise mean a damaged index")
    func liveRuns() {
        let plan = IndexRunPlan.live([3...3, 1...2, 1...1, 2...2, 4...6, 5...5])
        #expect(plan?.live == [1...2, 3...3, 4...6])
        #expect(Set(plan?.replaced ?? []) == [1...1, 2...2, 5...5])
        #expect(IndexRunPlan.live([1...3, 2...4]) == nil)
        #expect(IndexRunPlan.live([])?.live == [])
    }

    @Test(
        "merge rule: the newest runs merge while the run before holds no more lines than they do together",
        arguments: [
            ([], 0), ([16], 0), ([16, 16], 2), ([32, 16], 0), ([32, 16, 16], 3), ([100, 16, 16], 2),
            ([100, 40, 30, 20], 0), ([50, 20, 15, 15], 4)
        ])
    func mergeRule(_ counts: [Int], _ expected: Int) {
        #expect(IndexRunPlan.mergeCount(itemCounts: counts) == expected)
    }

    @Test("the run filter never misses a name it holds, survives its bytes, and rejects most others")
    func filter() throws {
        var filter = IndexRunFilter(capacity: 2_000)
        let names = (0..<2_000).map { RecordFileName.fileName(for: "id-\($0)") }
        for name in names { filter.insert(name.utf8) }
        #expect(names.allSatisfy { filter.mayContain($0.utf8) })
        let read = try #require(IndexRunFilter(bytes: filter.bytes))
        #expect(read == filter)
        let strangers = (0..<10_000).filter { filter.mayContain("other-\($0).json".utf8) }.count
        #expect(strangers < 300, "\(strangers) false positives in 10,000 (about 1 % expected)")
        #expect(IndexRunFilter(bytes: [1, 2, 3]) == nil)
    }

    @Test("names sort by their UTF-8 bytes, shorter first on a common prefix")
    func order() {
        let names = ["é.json", "a.json", "Z.json", "a", "a.jsonx", "^a.json", "%C3%A9.json"]
        #expect(
            names.sorted(by: StatIndexLine.precedes) == [
                "%C3%A9.json", "Z.json", "^a.json", "a", "a.json", "a.jsonx", "é.json"
            ])
        #expect(!StatIndexLine.precedes("a.json", "a.json"))
    }

    @Test(
        "run file names",
        arguments: [
            ("todo.1-1.run", 1...1), ("todo.3-17.run", 3...17), ("todo.0-1.run", nil), ("todo.2-1.run", nil),
            ("todo.1-1.runx", nil),
            ("todo2.1-1.run", nil), ("todo.1.run", nil), ("todo.+1-2.run", nil), ("todo.index", nil)
        ] as [(String, ClosedRange<Int>?)])
    func runFileNames(_ name: String, _ expected: ClosedRange<Int>?) {
        #expect(IndexRun.sequences(ofFileName: name, table: "todo") == expected)
    }
}
