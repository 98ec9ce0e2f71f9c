import CZlib

/// gzip (RFC 1952) compression and decompression over zlib, for HTTP bodies of the table protocol.
///
/// Both directions stream through zlib in fixed-size chunks, so a large body never needs a second full-size
/// buffer besides the output, and decompression stops as soon as the output would exceed the caller's limit
/// (a "zip bomb" costs at most `limit` bytes).
///
/// ```swift
/// let packed = try Gzip.compress(Array("hello".utf8))
/// let unpacked = try Gzip.decompress(packed, limit: 1 << 20)
/// ```
public enum Gzip {
    /// The compression level used when none is given: zlib's 6 trades speed and size well for JSON.
    public static let defaultLevel: Int32 = 6

    /// `true` when `bytes` starts with the gzip magic number.
    public static func isGzip(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        return iterator.next() == 0x1F && iterator.next() == 0x8B
    }

    /// The gzip form of `input` at `level` (0 = store only … 9 = smallest).
    public static func compress(_ input: [UInt8], level: Int32 = defaultLevel) throws(GzipError) -> [UInt8] {
        var stream = z_stream()
        // windowBits 15 + 16 asks zlib for a gzip header and trailer instead of a zlib wrapper.
        let status = deflateInit2_(
            &stream, max(0, min(9, level)), Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
            zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw GzipError.zlib(code: status, operation: "deflateInit2") }
        defer { deflateEnd(&stream) }

        var output: [UInt8] = []
        output.reserveCapacity(Int(deflateBound(&stream, UInt(input.count))))
        let chunkSize = 64 * 1024
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        try input.withUnsafeBufferPointer { (inputBuffer) throws(GzipError) in
            stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
            stream.avail_in = UInt32(inputBuffer.count)
            var result: Int32 = Z_OK
            repeat {
                result = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = UInt32(chunkSize)
                    return deflate(&stream, Z_FINISH)
                }
                guard result == Z_OK || result == Z_STREAM_END || result == Z_BUF_ERROR else {
                    throw GzipError.zlib(code: result, operation: "deflate")
                }
                output.append(contentsOf: chunk[0..<(chunkSize - Int(stream.avail_out))])
            } while result != Z_STREAM_END
        }
        return output
    }

    /// The bytes that the gzip (or zlib) data `input` holds; throws ``GzipError/tooLarge(limit:)`` as soon as
    /// they would exceed `limit` bytes, and ``GzipError/corrupt(_:)`` for data that is not valid or is cut short.
    /// Concatenated gzip members (RFC 1952 §2.2) are decompressed one after the other.
    public static func decompress(_ input: [UInt8], limit: Int) throws(GzipError) -> [UInt8] {
        var stream = z_stream()
        // windowBits 15 + 32 accepts both gzip and zlib headers.
        let status = inflateInit2_(&stream, 15 + 32, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw GzipError.zlib(code: status, operation: "inflateInit2") }
        defer { inflateEnd(&stream) }

        var output: [UInt8] = []
        output.reserveCapacity(min(limit, max(input.count * 4, 1024)))
        let chunkSize = 64 * 1024
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        try input.withUnsafeBufferPointer { (inputBuffer) throws(GzipError) in
            stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
            stream.avail_in = UInt32(inputBuffer.count)
            while true {
                let result = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = UInt32(chunkSize)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunkSize - Int(stream.avail_out)
                if output.count + produced > limit { throw GzipError.tooLarge(limit: limit) }
                output.append(contentsOf: chunk[0..<produced])
                switch result {
                case Z_STREAM_END:
                    guard stream.avail_in > 0 else { return }
                    // Another gzip member follows.
                    guard inflateReset(&stream) == Z_OK else {
                        throw GzipError.zlib(code: result, operation: "inflateReset")
                    }
                case Z_OK:
                    continue
                case Z_BUF_ERROR:
                    if stream.avail_in == 0 { throw GzipError.corrupt("the compressed data ends too early") }
                case Z_DATA_ERROR:
                    let message = stream.msg.map { String(cString: $0) } ?? "invalid compressed data"
                    throw GzipError.corrupt(message)
                default:
                    throw GzipError.zlib(code: result, operation: "inflate")
                }
            }
        }
        return output
    }
}

/// Why a gzip operation failed.
public enum GzipError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The decompressed data would be larger than the limit the caller set.
    case tooLarge(limit: Int)
    /// The input is not valid gzip data, or is cut short.
    case corrupt(String)
    /// zlib reported an unexpected status (out of memory, version mismatch).
    case zlib(code: Int32, operation: String)

    public var description: String {
        switch self {
        case .tooLarge(let limit): return "the decompressed body is larger than \(limit) bytes"
        case .corrupt(let reason): return "the gzip data is not valid: \(reason)"
        case .zlib(let code, let operation): return "zlib \(operation) failed with status \(code)"
        }
    }
}
