#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A TCP proxy on loopback that forwards every connection to the server and counts the bytes each way: what
/// goes over the wire (HTTP headers and bodies, compressed or not), as a client on a network would pay for it.
/// Used only for the byte counts (P5), never while timing.
final class CountingProxy: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let upstreamPort: UInt16
    private let lock = NSLock()
    private var sent = 0
    private var received = 0
    private var openPumps = 0

    var url: String { "http://127.0.0.1:\(port)" }

    /// Bytes from the client to the server, and from the server to the client, so far.
    var counts: (toServer: Int, toClient: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (sent, received)
    }

    init(upstreamPort: UInt16) throws {
        // A peer that closes early must not kill the benchmark with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        self.upstreamPort = upstreamPort
        let listener = try Loopback.openSocket()
        var address = Loopback.loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else { throw BenchError(what: "proxy", detail: "cannot listen: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        Thread { [self] in acceptLoop() }.start()
    }

    /// Stops accepting and waits until the connections in flight have closed; the counts stay.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        let deadline = Clock.now() + 10
        while Clock.now() < deadline {
            lock.lock()
            let open = openPumps
            lock.unlock()
            if open == 0 { return }
            usleep(10_000)
        }
    }

    /// Resets the counts to zero.
    func reset() {
        lock.lock()
        sent = 0
        received = 0
        lock.unlock()
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            guard let upstream = try? Loopback.openSocket(), Loopback.connect(upstream, port: upstreamPort) else {
                close(client)
                continue
            }
            // Forward each write at once: without this, Nagle's algorithm against delayed ACKs adds ~40 ms a request.
            var one: Int32 = 1
            for socket in [client, upstream] { setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) }
            lock.lock()
            openPumps += 2
            lock.unlock()
            let connection = ProxiedConnection(client: client, upstream: upstream)
            Thread { [self] in pump(from: client, to: upstream, towardServer: true, connection: connection) }.start()
            Thread { [self] in pump(from: upstream, to: client, towardServer: false, connection: connection) }.start()
        }
    }

    /// Copies until end of file, then half-closes the other side.
    private func pump(from source: Int32, to destination: Int32, towardServer: Bool, connection: ProxiedConnection) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        loop: while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { write(destination, $0.baseAddress! + offset, count - offset) }
                if written < 0 {
                    if errno == EINTR { continue }
                    break loop
                }
                offset += written
            }
            lock.lock()
            if towardServer { sent += count } else { received += count }
            lock.unlock()
        }
        shutdown(destination, Int32(SHUT_WR))
        connection.pumpFinished()
        lock.lock()
        openPumps -= 1
        lock.unlock()
    }
}

/// The two sockets of one proxied connection, closed when both directions have finished.
private final class ProxiedConnection: @unchecked Sendable {
    private let client: Int32
    private let upstream: Int32
    private let lock = NSLock()
    private var finished = 0

    init(client: Int32, upstream: Int32) {
        self.client = client
        self.upstream = upstream
    }

    func pumpFinished() {
        lock.lock()
        finished += 1
        let both = finished == 2
        lock.unlock()
        if both {
            close(client)
            close(upstream)
        }
    }
}
