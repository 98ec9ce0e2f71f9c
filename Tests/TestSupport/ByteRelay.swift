import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Copies the bytes of connections both ways, untouched, as the network between two peers: it counts them and can
/// hold each byte for a fixed one-way `delay`, as a link with a round trip of twice that would.
///
/// Bytes read at once are sent on together when their time comes, so a long answer costs the delay once, not once
/// a chunk. The link and CONNECT modes of ``LoopbackProxy`` relay through it.
final class ByteRelay: @unchecked Sendable {
    /// Seconds each byte is held in each direction.
    let delay: Double
    // Guarded by `lock`: the pump threads count.
    private let lock = NSLock()
    private var toServer = 0
    private var toClient = 0
    private var openConnections = 0

    init(delay: Double) {
        self.delay = delay
    }

    /// Bytes from the client to the server, and from the server to the client, so far.
    var counts: (toServer: Int, toClient: Int) { lock.withLock { (toServer, toClient) } }

    func resetCounts() {
        lock.withLock {
            toServer = 0
            toClient = 0
        }
    }

    /// Waits up to `seconds` until no connection is being relayed.
    func waitUntilIdle(seconds: Double) {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline, lock.withLock({ openConnections }) > 0 { usleep(10_000) }
    }

    /// Relays until both directions have ended, then closes both sockets.
    func relay(client: Int32, upstream: Int32) {
        for socket in [client, upstream] { LoopbackSocket.sendImmediately(socket) }
        lock.withLock { openConnections += 1 }
        let towardClient = DispatchGroup()
        towardClient.enter()
        Thread { [self] in
            pump(from: upstream, to: client, towardServer: false)
            towardClient.leave()
        }.start()
        pump(from: client, to: upstream, towardServer: true)
        towardClient.wait()
        close(client)
        close(upstream)
        lock.withLock { openConnections -= 1 }
    }

    /// Copies until end of file, then half-closes the other side; with a delay, through a ``DelayLine``.
    private func pump(from source: Int32, to destination: Int32, towardServer: Bool) {
        let line = delay > 0 ? DelayLine(delay: delay, destination: destination) : nil
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            if let line {
                line.send(Array(buffer[..<count]))
            } else if !LoopbackSocket.sendAll(destination, buffer[..<count]) {
                break
            }
            lock.withLock {
                if towardServer { toServer += count } else { toClient += count }
            }
        }
        line?.finish()
        shutdown(destination, Int32(SHUT_WR))
    }
}
