import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Blocking sockets on `127.0.0.1`: the one socket layer of the loopback test servers (``LoopbackProxy``,
/// ``HostileServer``), the raw HTTP clients of the tests and the benchmarks' hand-made connections.
package enum LoopbackSocket {
    #if canImport(Glibc)
    static let streamType = Int32(SOCK_STREAM.rawValue)
    static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    static let streamType = SOCK_STREAM
    static let sendFlags: Int32 = 0
    #endif

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// A socket connected to `127.0.0.1:port` with `timeoutSeconds` timeouts on sending and receiving (`nil`: none),
    /// or `nil` when the connection fails, with `errno` saying why.
    package static func connected(port: Int, timeoutSeconds: Int? = 30) -> Int32? {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { return nil }
        if let timeoutSeconds { setTimeout(fd, seconds: timeoutSeconds) }
        var address = loopback(port: port)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            let failure = errno
            close(fd)
            errno = failure
            return nil
        }
        return fd
    }

    package static func setTimeout(_ fd: Int32, seconds: Int) {
        var value = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends each write at once: without it, Nagle's algorithm against delayed ACKs adds ~40 ms a request.
    static func sendImmediately(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Closes with RST instead of FIN (`SO_LINGER` 0), as a crashed peer or a middlebox would.
    static func reset(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// Sends all of `bytes`; `false` when the peer is gone.
    @discardableResult
    package static func sendAll(_ fd: Int32, _ bytes: some Collection<UInt8>) -> Bool {
        let bytes = Array(bytes)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, sendFlags) }
            if sent <= 0 {
                if sent < 0 && errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }

    /// Reads one HTTP/1.1 message: the head, then a `Content-Length` or chunked body (a response without
    /// either runs to the end of the connection).
    static func readMessage(_ fd: Int32, isResponse: Bool) -> HTTPMessage? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        func fill() -> Bool {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if count <= 0 { return false }
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
        var headEnd: Int?
        while headEnd == nil {
            headEnd = HTTPMessage.headEnd(buffer)
            if headEnd == nil, !fill() { return nil }
        }
        guard var message = HTTPMessage.parseHead(Array(buffer[0..<headEnd!])) else { return nil }
        buffer = Array(buffer[(headEnd! + 4)...])
        if message.header("transfer-encoding")?.lowercased().contains("chunked") == true {
            var body: [UInt8] = []
            var position = 0
            while true {
                while HTTPMessage.lineEnd(buffer, from: position) == nil { if !fill() { return nil } }
                let lineEnd = HTTPMessage.lineEnd(buffer, from: position)!
                let sizeText =
                    String(decoding: buffer[position..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
                position = lineEnd + 2
                if size == 0 { break }
                while buffer.count < position + size + 2 { if !fill() { return nil } }
                body.append(contentsOf: buffer[position..<(position + size)])
                position += size + 2
            }
            message.body = body
            message.removeHeader("transfer-encoding")
        } else if let length = message.header("content-length").flatMap({ Int($0) }) {
            if message.expectsContinue && !isResponse && buffer.count < length {
                sendAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                message.removeHeader("expect")
            }
            while buffer.count < length { if !fill() { return nil } }
            message.body = Array(buffer[0..<length])
        } else if isResponse {
            while fill() {}
            message.body = buffer
        }
        return message
    }

    /// A socket listening on `127.0.0.1:port` (0: a free one), and the port.
    static func listening(port: Int) throws -> (descriptor: Int32, port: Int) {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw ProxyError("socket: errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            close(fd)
            throw ProxyError("bind/listen on port \(port): errno \(errno)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: actual.sin_port)))
    }

    /// Accepts connections on `listener` until it is closed, handling each on its own thread.
    static func acceptLoop(_ listener: Int32, handle: @escaping @Sendable (Int32) -> Void) {
        Thread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                Thread { handle(client) }.start()
            }
        }.start()
    }

    /// Stops `listener` accepting; a client then gets "connection refused".
    static func closeListener(_ listener: Int32) {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

/// A loopback server's setup failure.
public struct ProxyError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
