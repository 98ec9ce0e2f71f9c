import Foundation
import TableSync
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One TCP connection to a loopback port, written and read byte by byte, for what no client library does on
/// purpose: pipelined requests, a head or body sent slowly, HTTP/1.0, a `Content-Length` that never comes.
///
/// Answers are read from one buffer kept across reads, so pipelined answers are each read whole. Every blocking
/// call runs on a thread of its own, off the cooperative pool that in-process servers use.
public final class RawHTTPConnection: @unchecked Sendable {
    /// An answer as read from the connection.
    public struct Answer: Sendable {
        public var status: Int
        /// The `Name: value` lines.
        public var headerLines: [String]
        public var body: [UInt8]

        /// The value of header `name` (any case).
        public func header(_ name: String) -> String? {
            HTTPMessage(head: [""] + headerLines, body: []).header(name.lowercased())
        }

        /// The body as text.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    private let fd: Int32
    // Touched by one blocking call at a time: the tests await each call before the next.
    private var buffer: [UInt8] = []
    private var closed = false

    /// Connects to `127.0.0.1:port`; `nil` when the connection is refused.
    public init?(port: Int) {
        guard let fd = LoopbackSocket.connected(port: port) else { return nil }
        self.fd = fd
    }

    deinit { closeSocket() }

    /// Closes the connection from this side.
    public func closeSocket() {
        guard !closed else { return }
        closed = true
        close(fd)
    }

    /// Sends `text` (or `bytes`) as it is; `false` when the connection no longer takes it.
    @discardableResult
    public func send(_ text: String) async -> Bool { await send(Array(text.utf8)) }

    @discardableResult
    public func send(_ bytes: [UInt8]) async -> Bool {
        await runOnThreadOfItsOwn { [fd] in LoopbackSocket.sendAll(fd, bytes) }
    }

    /// Sends `text` on the calling thread, without suspending: for requests that must reach the server together even
    /// when the test's own tasks wait long for a thread on a busy machine. `false` when the connection no longer takes
    /// it.
    @discardableResult
    public func sendNow(_ text: String) -> Bool { LoopbackSocket.sendAll(fd, Array(text.utf8)) }

    /// Reads the next answer (its head and its `Content-Length` body), waiting at most `seconds`; `nil` when none
    /// came in time or the connection ended first. With `bodyTail`, only the body's last `bodyTail` bytes are kept:
    /// every byte is still read from the connection, but a client of pages of megabytes does not copy them around
    /// (which would load the test's processors more than the server's).
    public func readAnswer(within seconds: Double, keepingLast bodyTail: Int = .max) async -> Answer? {
        await runOnThreadOfItsOwn { [self] in readAnswerNow(within: seconds, keepingLast: bodyTail) }
    }

    /// ``readAnswer(within:keepingLast:)`` on the calling thread, which it blocks: for a client with a thread of its
    /// own.
    public func readAnswerNow(within seconds: Double, keepingLast bodyTail: Int = .max) -> Answer? {
        setTimeout(seconds)
        // Body bytes of this answer read and dropped, beyond the tail.
        var dropped = 0
        while true {
            if let end = HTTPMessage.headEnd(buffer), let head = HTTPMessage.parseHead(Array(buffer[0..<end])) {
                let length = head.header("content-length").flatMap { Int($0) } ?? 0
                let bodyStart = end + 4
                let answerEnd = bodyStart + length - dropped
                if buffer.count >= answerEnd {
                    let body = Array(buffer[bodyStart..<answerEnd].suffix(bodyTail))
                    buffer.removeFirst(answerEnd)
                    return Answer(status: head.status, headerLines: Array(head.head.dropFirst()), body: body)
                }
                let excess = buffer.count - bodyStart - bodyTail
                if excess > 0 {
                    buffer.removeSubrange(bodyStart..<(bodyStart + excess))
                    dropped += excess
                }
            }
            guard fill() == .data else { return nil }
        }
    }

    /// Waits at most `seconds` for the server to close the connection (reading and dropping what else it sends);
    /// `true` when it closed it.
    public func waitForClose(within seconds: Double) async -> Bool {
        await runOnThreadOfItsOwn { [self] in
            setTimeout(seconds)
            while true {
                switch fill() {
                case .data: continue
                case .closed: return true
                case .timedOut: return false
                }
            }
        }
    }

    private enum ReadResult { case data, closed, timedOut }

    private func fill() -> ReadResult {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
        if count > 0 {
            buffer.append(contentsOf: chunk[0..<count])
            return .data
        }
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .timedOut }
        return .closed
    }

    private func setTimeout(_ seconds: Double) {
        var value = timeval(
            tv_sec: .init(seconds.rounded(.down)), tv_usec: .init((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

}
