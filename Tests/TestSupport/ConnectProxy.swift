import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTPS forward proxy on a loopback port, as a company network puts between its machines and the internet: a
/// client asks `CONNECT host:port`, the proxy opens a connection to that port on loopback and passes bytes both
/// ways untouched (TLS runs end to end through it). It records every tunnel it opened.
public final class ConnectProxy: @unchecked Sendable {
    private let listener: Int32
    public let port: Int
    // Guarded by `lock`: the connection threads append.
    private let lock = NSLock()
    private var opened: [String] = []

    /// `http://127.0.0.1:PORT`, the value of `https_proxy` that names it.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// The `host:port` of every tunnel so far, in order.
    public var tunnels: [String] { lock.withLock { opened } }

    public init() throws {
        (listener, port) = try LoopbackSocket.listening(port: 0)
        LoopbackSocket.acceptLoop(listener) { [self] client in handle(client) }
    }

    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func handle(_ client: Int32) {
        LoopbackSocket.setTimeout(client, seconds: 30)
        guard let head = LoopbackSocket.readMessage(client, isResponse: false)?.head.first else {
            close(client)
            return
        }
        let parts = head.split(separator: " ")
        guard parts.count >= 2, parts[0] == "CONNECT", let portText = parts[1].split(separator: ":").last,
            let target = Int(portText),
            let upstream = LoopbackSocket.connected(port: target)
        else {
            LoopbackSocket.sendAll(client, Array("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n".utf8))
            close(client)
            return
        }
        lock.withLock { opened.append(String(parts[1])) }
        LoopbackSocket.sendAll(client, Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8))
        let done = DispatchGroup()
        for (from, to) in [(client, upstream), (upstream, client)] {
            done.enter()
            Thread {
                Self.pump(from: from, to: to)
                done.leave()
            }.start()
        }
        done.wait()
        close(client)
        close(upstream)
    }

    /// Copies bytes from `from` to `to` until `from` ends, then ends `to`'s sending side.
    private static func pump(from: Int32, to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0, LoopbackSocket.sendAll(to, Array(buffer[..<count])) else { break }
        }
        shutdown(to, Int32(SHUT_WR))
    }
}
