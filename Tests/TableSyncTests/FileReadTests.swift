import Foundation
import Testing
import TestSupport
@testable import TableSyncStorage

/// `FileSystem.readFile`: one read for a regular file of the size its caller's `stat` gave, and the whole file
/// whatever that size said; a file whose reads come back short before its end (/proc) is read to its end.
@Suite struct FileReadTests {
    @Test("a regular file is read whole, whether the size given is right, too small, too large or not given")
    func regularFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("record.json")
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try FileSystem.writeNewFile(path, bytes)
        for expected: Int64? in [10_000, 100, 0, 20_000, nil] {
            #expect(try FileSystem.readFile(path, expectedSize: expected) == bytes, "expected size \(expected ?? -1)")
        }
        try FileSystem.writeNewFile(directory.file("empty.json"), [])
        #expect(try FileSystem.readFile(directory.file("empty.json")).isEmpty)
    }

    @Test("a /proc file, which is read a page at a time, is read to its end")
    func procFile() throws {
        let maps = String(decoding: try FileSystem.readFile("/proc/self/maps"), as: UTF8.self)
        #expect(maps.utf8.count > 4096, "this process maps more than a page's worth of lines")
        #expect(maps.contains("[stack]") && maps.hasSuffix("\n"), "the last lines are there")
    }
}
