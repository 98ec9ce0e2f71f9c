#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A TCP proxy on loopback that stands for the network between client and server: it forwards every
/// connection to the server, counts the bytes each way (what goes over the wire, HTTP headers and bodies,
/// compressed or not, as a client on a network would pay for it: P5), and can hold each byte for a fixed
/// one-way `delay`, as a link with a round trip of twice that would (P3 over a slow link). Bytes read at once
/// are sent on together when their time comes, so a long answer costs the delay once, not once a chunk.
final class LinkProxy: @unchecked Sendable {
    let port: UInt16
    /// Seconds each byte is held in each direction.
    let delay: Double
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

    init(upstreamPort: UInt16, delay: Double = 0) throws {
        // A peer that closes early must not kill the benchmark with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        self.upstreamPort = upstreamPort
        self.delay = delay
        let listener = try Loopback.openSocket()
        var address = Loopback.loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            throw BenchError(what: "proxy", detail: "cannot listen: errno \(errno)")
        }
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
            for socket in [client, upstream] {
                setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            lock.lock()
            openPumps += 2
            lock.unlock()
            let connection = ProxiedConnection(client: client, upstream: upstream)
            Thread { [self] in pump(from: client, to: upstream, towardServer: true, connection: connection) }.start()
            Thread { [self] in pump(from: upstream, to: client, towardServer: false, connection: connection) }.start()
        }
    }

    /// Copies until end of file, then half-closes the other side; with a delay, through a ``DelayLine``.
    private func pump(from source: Int32, to destination: Int32, towardServer: Bool, connection: ProxiedConnection) {
        let line = delay > 0 ? DelayLine(delay: delay, destination: destination) : nil
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            if let line {
                line.send(Array(buffer[..<count]))
            } else if !Self.writeAll(buffer[..<count], to: destination) {
                break
            }
            lock.lock()
            if towardServer { sent += count } else { received += count }
            lock.unlock()
        }
        line?.finish()
        shutdown(destination, Int32(SHUT_WR))
        connection.pumpFinished()
        lock.lock()
        openPumps -= 1
        lock.unlock()
    }

    /// Writes all of `bytes`; `false` when the peer is gone.
    static func writeAll(_ bytes: ArraySlice<UInt8>, to destination: Int32) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let written = bytes.withUnsafeBytes {
                write(destination, $0.baseAddress! + (offset - bytes.startIndex), bytes.endIndex - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }
}

/// One direction of a link with latency: bytes handed in are written out `delay` seconds later, in order, by a
/// thread of its own.
private final class DelayLine: @unchecked Sendable {
    private let delay: Double
    private let destination: Int32
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [(due: Double, bytes: [UInt8])] = []
    private var closed = false
    private var drained = false

    init(delay: Double, destination: Int32) {
        self.delay = delay
        self.destination = destination
        Thread { [self] in run() }.start()
    }

    func send(_ bytes: [UInt8]) {
        condition.lock()
        queue.append((Clock.now() + delay, bytes))
        condition.signal()
        condition.unlock()
    }

    /// Waits until everything handed in is written.
    func finish() {
        condition.lock()
        closed = true
        condition.broadcast()
        while !drained { condition.wait() }
        condition.unlock()
    }

    private func run() {
        var alive = true
        while true {
            condition.lock()
            while queue.isEmpty && !closed { condition.wait() }
            if queue.isEmpty {
                drained = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let (due, bytes) = queue.removeFirst()
            condition.unlock()
            let wait = due - Clock.now()
            if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
            if alive { alive = LinkProxy.writeAll(bytes[...], to: destination) }
        }
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
