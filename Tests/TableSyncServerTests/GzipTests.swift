import GzipCompression
import Testing
import TestSupport

@Suite("gzip")
struct GzipTests {
    @Test("round trip, empty and large, with the magic number")
    func roundTrip() throws {
        for size in [0, 1, 1000, 3_000_000] {
            let input = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7 / 13) }
            let packed = try Gzip.compress(input)
            #expect(Gzip.isGzip(packed))
            #expect(try Gzip.decompress(packed, limit: size) == input)
        }
    }

    @Test("the decompression limit stops a bomb early")
    func limit() throws {
        let packed = try Gzip.compress([UInt8](repeating: 0, count: 10_000_000), level: 9)
        #expect(packed.count < 20_000)
        #expect(throws: GzipError.tooLarge(limit: 1_000_000)) { try Gzip.decompress(packed, limit: 1_000_000) }
    }

    @Test("corrupt and truncated data are errors, not crashes")
    func corrupt() throws {
        let packed = try Gzip.compress(Array("hello hello hello".utf8))
        #expect(throws: GzipError.self) { try Gzip.decompress(Array(packed.prefix(packed.count - 6)), limit: 100) }
        #expect(throws: GzipError.self) { try Gzip.decompress([0x1F, 0x8B, 0, 0, 0], limit: 100) }
        #expect(throws: GzipError.self) { try Gzip.decompress([], limit: 100) }
    }

    @Test("concatenated members decompress as one")
    func members() throws {
        let packed = try Gzip.compress(Array("ab".utf8)) + Gzip.compress(Array("cd".utf8))
        #expect(try Gzip.decompress(packed, limit: 100) == Array("abcd".utf8))
    }
}
