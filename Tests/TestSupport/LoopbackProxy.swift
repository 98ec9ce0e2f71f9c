import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A proxy on a loopback port, between a client and a server, that stands for the network between them.
///
/// One listener and one accept loop, a thread per connection; what a connection gets depends on the ``Mode``:
/// ```swift
/// let link = try LoopbackProxy(.link(upstreamPort: server.port, delay: 0.05))   // a slow link, bytes counted
/// let faulty = try LoopbackProxy(.faults(upstreamPort: server.port))              // faults injected per request
/// let company = try LoopbackProxy(.connect)                                       // an HTTPS forward proxy
/// ```
public final class LoopbackProxy: @unchecked Sendable {
    /// What the proxy does with each connection.
    public enum Mode: Sendable {
        /// Relay the bytes untouched and count them, each held `delay` seconds one way (``counts``).
        case link(upstreamPort: Int, delay: Double = 0)
        /// Carry one HTTP exchange a connection and inject the faults scripted with
        /// ``inject(_:method:pathContains:bodyContains:times:)`` or ``injectRandomly(seed:probability:from:)``.
        case faults(upstreamPort: Int)
        /// Answer `CONNECT host:port` by opening a tunnel to that port on loopback, as a company network's HTTPS
        /// proxy does: TLS runs end to end through it (``tunnels``).
        case connect
    }

    public let mode: Mode
    /// The port the proxy listens on.
    public let port: Int
    private let listener: Int32
    private let relay: ByteRelay
    private let injector: FaultInjector?
    // Guarded by `lock`: the connection threads append.
    private let lock = NSLock()
    private var opened: [String] = []
    private var stopped = false

    /// `http://127.0.0.1:PORT`; in CONNECT mode, the value of `https_proxy` that names it.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts a proxy in `mode`, listening on `port` (0: a free one).
    public init(_ mode: Mode, port: Int = 0) throws {
        self.mode = mode
        switch mode {
        case .link(_, let delay):
            relay = ByteRelay(delay: delay)
            injector = nil
        case .faults(let upstreamPort):
            relay = ByteRelay(delay: 0)
            injector = FaultInjector(upstreamPort: upstreamPort)
        case .connect:
            relay = ByteRelay(delay: 0)
            injector = nil
        }
        (listener, self.port) = try LoopbackSocket.listening(port: port)
        LoopbackSocket.acceptLoop(listener) { [self] client in serve(client) }
    }

    deinit { stop() }

    /// Stops listening; a client then gets "connection refused". In link mode, also waits (up to 10 s) until the
    /// connections in flight have closed, so that the ``counts`` are final; other exchanges finish on their own.
    public func stop() {
        let wasStopped = lock.withLock {
            defer { stopped = true }
            return stopped
        }
        guard !wasStopped else { return }
        LoopbackSocket.closeListener(listener)
        if case .link = mode { relay.waitUntilIdle(seconds: 10) }
    }

    private func serve(_ client: Int32) {
        switch mode {
        case .link(let upstreamPort, _):
            guard let upstream = LoopbackSocket.connected(port: upstreamPort, timeoutSeconds: nil) else {
                close(client)
                return
            }
            relay.relay(client: client, upstream: upstream)
        case .faults:
            injector?.serve(client)
        case .connect:
            tunnel(client)
        }
    }

    // MARK: - Link mode

    /// Bytes from the client to the server, and from the server to the client, so far.
    public var counts: (toServer: Int, toClient: Int) { relay.counts }

    /// Sets the ``counts`` back to zero.
    public func resetCounts() { relay.resetCounts() }

    // MARK: - Fault mode

    /// Injects `fault` into the next `times` requests matching `method`, a path containing `pathContains` and a
    /// body (inflated, when the request sends it gzip-compressed) containing `bodyContains`.
    public func inject(
        _ fault: NetworkFault, method: String? = nil, pathContains: String? = nil, bodyContains: String? = nil,
        times: Int = 1
    ) {
        injector?.inject(fault, method: method, pathContains: pathContains, bodyContains: bodyContains, times: times)
    }

    /// Injects one of `faults`, chosen with a generator seeded by `seed`, into each request with `probability`.
    public func injectRandomly(seed: UInt64, probability: Double, from faults: [NetworkFault]) {
        injector?.injectRandomly(seed: seed, probability: probability, from: faults)
    }

    /// Forwards everything faithfully from now on.
    public func clearFaults() { injector?.clearFaults() }

    /// Every exchange so far, in the order the requests arrived.
    public var log: [ProxiedExchange] { injector?.log ?? [] }

    /// How many exchanges got a fault.
    public var faultsInjected: Int { log.filter { $0.fault != .none }.count }

    // MARK: - CONNECT mode

    /// The `host:port` of every tunnel so far, in order.
    public var tunnels: [String] { lock.withLock { opened } }

    private func tunnel(_ client: Int32) {
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
        relay.relay(client: client, upstream: upstream)
    }
}
