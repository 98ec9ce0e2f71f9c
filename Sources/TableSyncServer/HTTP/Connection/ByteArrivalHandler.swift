import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// In front of NIO's HTTP decoder: tells the ``ConnectionGuardHandler`` that bytes arrived, so that a request head
/// that trickles in is seen from its first byte, and follows each chunked body with a ``ChunkedBodyScan``, so that a
/// chunk announced larger than any body is refused at once instead of awaited.
///
/// To know where a chunked body begins, the bytes go to the decoder in pieces that end where a head can end (after
/// `\r\n\r\n`): when the guard has just been handed a chunked request's head, the next byte is its body's first.
/// The decoder reads pieces as it reads whole reads.
final class ByteArrivalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let guardHandler: ConnectionGuardHandler
    /// The chunked body being followed.
    private var chunkedBody: ChunkedBodyScan?
    /// The last three bytes passed on outside a followed body, the oldest first: where a head's end may have begun.
    private var recent: (UInt8, UInt8, UInt8) = (0, 0, 0)

    init(guardHandler: ConnectionGuardHandler) {
        self.guardHandler = guardHandler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guardHandler.bytesArrived()
        var buffer = unwrapInboundIn(data)
        while buffer.readableBytes > 0, !guardHandler.isRefusing {
            if var scan = chunkedBody {
                switch buffer.withUnsafeReadableBytes({ scan.scan($0) }) {
                case .reading:
                    chunkedBody = scan
                    pass(buffer.readSlice(length: buffer.readableBytes)!, context: context)
                case .ended(let consumed):
                    chunkedBody = nil
                    recent = (0, 0, 0)
                    pass(buffer.readSlice(length: consumed)!, context: context)
                case .tooLarge(let overflow):
                    chunkedBody = nil
                    guardHandler.chunkTooLarge(overflow: overflow)
                case .leftToDecoder:
                    chunkedBody = nil
                    recent = (0, 0, 0)
                    pass(buffer.readSlice(length: buffer.readableBytes)!, context: context)
                }
            } else {
                let headEnd = buffer.withUnsafeReadableBytes { Self.headEnd(in: $0, after: recent) }
                let piece = buffer.readSlice(length: headEnd ?? buffer.readableBytes)!
                piece.withUnsafeReadableBytes { recent = Self.lastThree(of: $0, after: recent) }
                pass(piece, context: context)
                // A head handed over in a piece that did not end with it is not followed: its body's first bytes
                // went to the decoder unseen (a body stalled in it still meets the body timeout).
                if let limit = guardHandler.takeChunkedBodyStart(), headEnd != nil {
                    chunkedBody = ChunkedBodyScan(limit: limit)
                }
            }
        }
    }

    private func pass(_ piece: ByteBuffer, context: ChannelHandlerContext) {
        context.fireChannelRead(wrapInboundOut(piece))
    }

    /// Where the first `\r\n\r\n` in `bytes` ends (the count of bytes up to it), `previous` being the three bytes
    /// before them; `nil` when there is none.
    static func headEnd(in bytes: UnsafeRawBufferPointer, after previous: (UInt8, UInt8, UInt8)) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var start = 0
        while start < bytes.count,
            let found = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start)
        {
            let index = base.distance(to: UnsafeRawPointer(found))
            func byte(_ offset: Int) -> UInt8 {
                let at = index - offset
                if at >= 0 { return bytes[at] }
                switch at {
                case -1: return previous.2
                case -2: return previous.1
                default: return previous.0
                }
            }
            if byte(1) == UInt8(ascii: "\r"), byte(2) == UInt8(ascii: "\n"), byte(3) == UInt8(ascii: "\r") {
                return index + 1
            }
            start = index + 1
        }
        return nil
    }

    /// The last three bytes of `previous` followed by `bytes`.
    static func lastThree(
        of bytes: UnsafeRawBufferPointer, after previous: (UInt8, UInt8, UInt8)
    ) -> (
        UInt8, UInt8, UInt8
    ) {
        var last = previous
        for byte in bytes.suffix(3) { last = (last.1, last.2, byte) }
        return last
    }
}
