import Testing
@testable import TableSync
@testable import TableSyncStorage

/// The rule that picks `syncfs` or an `fsync` per file for a durable batch, alone, and the reading of
/// `/proc/meminfo` it relies on.
@Suite("Durability plan")
struct DurabilityPlanTests {
    static let perFile = DurabilityPlan.strangerBytesPerFile

    @Test(
        "syncfs unless others' unwritten data passes 512 KiB per file of the batch",
        arguments: [
            // files, batch bytes, system unwritten bytes, expected
            (100, 40_000, 0, DurabilityPlan.wholeFileSystem),
            (100, 40_000, 40_000, .wholeFileSystem),
            (100, 40_000, 40_000 + 100 * perFile, .wholeFileSystem),
            (100, 40_000, 40_001 + 100 * perFile, .eachFile),
            (100, 40_000, 2_000_000_000, .eachFile),
            (1000, 400_000, 450_000_000, .wholeFileSystem),
            (1000, 400_000, 2_000_000_000, .eachFile),
            // The batch's own bytes never count against it.
            (3, 900_000_000, 900_000_000, .wholeFileSystem),
            // Up to two files: a call each either way.
            (2, 100, 0, .eachFile),
            (1, 100, 0, .eachFile)
        ] as [(Int, Int, Int, DurabilityPlan)])
    func plan(files: Int, batchBytes: Int, unwritten: Int, expected: DurabilityPlan) {
        #expect(
            DurabilityPlan.choose(files: files, batchBytes: batchBytes, systemUnwrittenBytes: unwritten) == expected)
    }

    @Test("unknown unwritten data keeps syncfs; up to two files never read it")
    func unknownMemory() {
        #expect(DurabilityPlan.choose(files: 10, batchBytes: 1, systemUnwrittenBytes: nil) == .wholeFileSystem)
        var reads = 0
        func reading() -> Int? {
            reads += 1
            return 0
        }
        _ = DurabilityPlan.choose(files: 2, batchBytes: 1, systemUnwrittenBytes: reading())
        #expect(reads == 0)
        _ = DurabilityPlan.choose(files: 3, batchBytes: 1, systemUnwrittenBytes: reading())
        #expect(reads == 1)
    }

    @Test("TABLESYNC_DURABILITY: unset or empty is auto; other values are refused by name")
    func setting() throws {
        #expect(try DurabilitySetting.parse(nil).get() == .automatic)
        #expect(try DurabilitySetting.parse("").get() == .automatic)
        #expect(try DurabilitySetting.parse("fsync").get() == .fsync)
        #expect(
            throws: StoreError.invalidEnvironment(
                variable: "TABLESYNC_DURABILITY", value: "fast", accepted: ["auto", "syncfs", "fsync"])
        ) {
            try DurabilitySetting.parse("fast").get()
        }
    }

    @Test("Dirty + Writeback from /proc/meminfo; WritebackTmp is not Writeback; a text without both is unknown")
    func meminfo() {
        let text = """
            MemTotal:       24683520 kB
            Dirty:            775892 kB
            Writeback:          1024 kB
            AnonPages:        512000 kB
            WritebackTmp:     999999 kB
            """
        #expect(SystemMemory.unwrittenBytes(meminfo: text) == (775_892 + 1024) * 1024)
        #expect(SystemMemory.unwrittenBytes(meminfo: "MemTotal: 1 kB\nDirty: 5 kB") == nil)
        #expect(SystemMemory.unwrittenBytes(meminfo: "Dirty: x kB\nWriteback: 0 kB") == nil)
        #if os(Linux)
        #expect(SystemMemory.unwrittenBytes() != nil, "this machine's /proc/meminfo reads")
        #endif
    }
}
