@testable import TableSyncServer
import Testing

/// ``ChunkedBodyScan``, which follows a chunked body's framing for the chunk sizes NIO's decoder does not report,
/// and ``ByteArrivalHandler/headEnd(in:after:)``, which finds where a chunked body begins.
@Suite("Chunked body scan")
struct ChunkedBodyScanTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let bytes: String
        let limit: Int
        let verdict: ChunkedBodyScan.Verdict
    }

    static let cases: [Case] = [
        Case(
            testDescription: "a body of two chunks ends after its last CRLF",
            bytes: "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", limit: 100, verdict: .ended(consumed: 26)),
        Case(
            testDescription: "the next request's bytes are not the body's",
            bytes: "5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\n", limit: 100, verdict: .ended(consumed: 15)),
        Case(
            testDescription: "extensions and trailers are followed",
            bytes: "5;name=\"v\"\r\nhello\r\n0\r\nX-Trailer: a\r\n\r\n", limit: 100, verdict: .ended(consumed: 38)),
        Case(
            testDescription: "a chunk whose bytes are still to come",
            bytes: "5\r\nhel", limit: 100, verdict: .reading),
        Case(
            testDescription: "a size of 16 digits cannot be a count: refused at its 16th digit",
            bytes: "ffffffffffffffff\r\n", limit: .max, verdict: .tooLarge(overflow: true)),
        Case(
            testDescription: "a size over the limit is refused once its digits end, before the line does",
            bytes: "65\r", limit: 100, verdict: .tooLarge(overflow: false)),
        Case(
            testDescription: "a size's digits may still be coming",
            bytes: "65", limit: 100, verdict: .reading),
        Case(
            testDescription: "chunks that together pass the limit",
            bytes: "6\r\nabcdef\r\n5\r\n", limit: 10, verdict: .tooLarge(overflow: false)),
        Case(
            testDescription: "a size that is not hexadecimal is the decoder's to refuse",
            bytes: "zz\r\n", limit: 100, verdict: .leftToDecoder),
        Case(
            testDescription: "a size line ended by a bare LF is the decoder's to refuse",
            bytes: "5\nhello\r\n", limit: 100, verdict: .leftToDecoder),
        Case(
            testDescription: "a chunk not followed by CRLF is the decoder's to refuse",
            bytes: "5\r\nhelloXX", limit: 100, verdict: .leftToDecoder)
    ]

    /// The verdict on `bytes` fed in pieces of `size` bytes; `ended` counts from the start of `bytes`.
    private static func verdict(_ bytes: [UInt8], limit: Int, pieces size: Int) -> ChunkedBodyScan.Verdict {
        var scan = ChunkedBodyScan(limit: limit)
        var start = 0
        while start < bytes.count {
            let piece = Array(bytes[start..<min(start + size, bytes.count)])
            let verdict = piece.withUnsafeBytes { scan.scan($0) }
            switch verdict {
            case .reading: start += size
            case .ended(let consumed): return .ended(consumed: start + consumed)
            default: return verdict
            }
        }
        return .reading
    }

    @Test("verdicts, whether the bytes come at once or one by one", arguments: cases)
    func verdicts(_ example: Case) {
        let bytes = Array(example.bytes.utf8)
        #expect(Self.verdict(bytes, limit: example.limit, pieces: bytes.count) == example.verdict)
        #expect(Self.verdict(bytes, limit: example.limit, pieces: 1) == example.verdict)
        #expect(Self.verdict(bytes, limit: example.limit, pieces: 4) == example.verdict)
    }

    @Test("where a head ends, also when its CRLF CRLF spans two reads")
    func headEnd() {
        func end(_ text: String, after previous: String = "") -> Int? {
            let before = Array(("\0\0\0" + previous).utf8.suffix(3))
            return Array(text.utf8).withUnsafeBytes {
                ByteArrivalHandler.headEnd(in: $0, after: (before[0], before[1], before[2]))
            }
        }
        #expect(end("POST /tables/t HTTP/1.1\r\nHost: a\r\n\r\n5\r\nhello") == 36)
        #expect(end("GET / HTTP/1.1\r\nHost: a\r\n") == nil)
        #expect(end("\n5\r\n", after: "Host: a\r\n\r") == 1)
        #expect(end("\r\n5\r\n", after: "Host: a\r\n") == 2)
        #expect(end("\r\n\r\n") == 4)
        #expect(end("a\n\n") == nil)
    }
}
