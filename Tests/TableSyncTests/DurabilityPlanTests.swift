import Testing
@testable import TableSync

/// The rule that picks `syncfs` or an `fsync` per file for a durable batch, alone, and the reading of
/// `/proc/meminfo` it relies on.
@Suite("Durability plan")
struct DurabilityPlanTests {
    static let perFile = DurabilityPlan.strangerBytesPerFile

    @Test("syncfs unless others' unwritten data passes 512 KiB per file of the batch",
          arguments: [
              // files, batch bytes, system unwritten bytes, syncfs available, expected
              (100, 40_000, 0, true, DurabilityPlan.wholeFileSystem),
              (100, 40_000, 40_000, true, .wholeFileSystem),
              (100, 40_000, 40_000 + 100 * perFile, true, .wholeFileSystem),
              (100, 40_000, 40_001 + 100 * perFile, true, .eachFile),
              (100, 40_000, 2_000_000_000, true, .eachFile),
              (1000, 400_000, 450_000_000, true, .wholeFileSystem),
              (1000, 400_000, 2_000_000_000, true, .eachFile),
              // The batch's own bytes never count against it.
              (3, 900_000_000, 900_000_000, true, .wholeFileSystem),
              // Up to two files: a call each either way.
              (2, 100, 0, true, .eachFile),
              (1, 100, 0, true, .eachFile),
              // No syncfs on this platform.
              (500, 100_000, 0, false, .eachFile),
          ] as [(Int, Int, Int, Bool, DurabilityPlan)])
    func plan(files: Int, batchBytes: Int, unwritten: Int, canSync: Bool, expected: DurabilityPlan) {
        #expect(DurabilityPlan.choose(files: files, batchBytes: batchBytes, systemUnwrittenBytes: unwritten,
                                      canSyncWholeFileSystem: canSync) == expected)
    }

    @Test("unknown unwritten data keeps syncfs")
    func unknownMemory() {
        #expect(DurabilityPlan.choose(files: 10, batchBytes: 1, systemUnwrittenBytes: nil, canSyncWholeFileSystem: true) == .wholeFileSystem)
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
