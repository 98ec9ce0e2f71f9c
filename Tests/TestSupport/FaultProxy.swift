import Foundation
import GzipCompression
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fault ``FaultProxy`` injects into one HTTP exchange.
///
/// A mock in the sense that it stands between two real parts: a real server cannot be made to reset a connection
/// after it committed, lose an answer, or serve a page twice on demand, so the faults are made here, on the wire.
public enum NetworkFault: Sendable, Equatable, CustomStringConvertible {
    /// Forward faithfully.
    case none
    /// Read the request's head, then reset: the request dies half-sent and the server never sees it.
    case resetMidRequest
    /// Forward; the server commits; send half of the answer, then reset.
    case resetMidResponse
    /// Forward; send the head and half of the body with the full `Content-Length`, then close.
    case truncatedResponse
    /// Forward; damage the body's bytes (a gzip body no longer inflates, a JSON body no longer parses).
    case corruptResponse
    /// Answer this status without forwarding (a gateway or a throttled server); 429/503 with `Retry-After`.
    case status(Int)
    /// Forward (the server commits), then answer this status instead: the acknowledgement is lost.
    case statusAfterCommit(Int)
    /// Forward (the server commits), then hold the answer this many seconds, past the client's timeout.
    case delayAfterCommit(seconds: Double)
    /// For a list request: forward, then answer with the previous page of the same table again.
    case replayPreviousPage
    /// Answer `200 text/html` with a login page without forwarding, as a captive portal or a proxy does.
    case portalPage

    public var description: String {
        switch self {
        case .none: return "none"
        case .resetMidRequest: return "reset mid-request"
        case .resetMidResponse: return "reset mid-response"
        case .truncatedResponse: return "truncated response"
        case .corruptResponse: return "corrupt response"
        case .status(let code): return "\(code)"
        case .statusAfterCommit(let code): return "\(code) after commit"
        case .delayAfterCommit(let seconds): return "delayed \(seconds)s after commit"
        case .replayPreviousPage: return "previous page replayed"
        case .portalPage: return "a captive portal's page"
        }
    }

    /// Whether the server may have applied the request before the client saw the fault.
    public var afterCommit: Bool {
        switch self {
        case .resetMidResponse, .truncatedResponse, .corruptResponse, .statusAfterCommit, .delayAfterCommit,
            .replayPreviousPage:
            return true
        default: return false
        }
    }
}

/// One request that went through the proxy, and what was done to it.
public struct ProxiedExchange: Sendable, CustomStringConvertible {
    public var method: String
    /// Path and query as sent.
    public var target: String
    public var fault: NetworkFault
    public var description: String { "\(method) \(target) → \(fault)" }
}

/// A fault-injecting HTTP/1.1 proxy on a loopback port, between a client and a live server.
///
/// Each connection carries one exchange (answers say `Connection: close`), handled on its own thread with
/// blocking sockets, so faults land at exact points of the exchange: before the server sees the request, or after
/// it committed and before the client sees the answer. Faults come from a script
/// (``inject(_:method:pathContains:times:)``)
/// and, when that has nothing for a request, from a seeded random choice (``injectRandomly(seed:probability:from:)``).
public final class FaultProxy: @unchecked Sendable {
    // Mutable state is guarded by `lock`; the class is shared with the connection threads.
    private struct Rule {
        var method: String?
        var pathContains: String?
        var bodyContains: String?
        var fault: NetworkFault
        var remaining: Int
    }

    private let listener: Int32
    private let upstreamPort: Int
    /// The port the proxy listens on.
    public let port: Int
    private let lock = NSLock()
    private var rules: [Rule] = []
    private var random: (generator: SeededGenerator, probability: Double, faults: [NetworkFault])?
    private var lastPages: [String: [UInt8]] = [:]
    private var exchanges: [ProxiedExchange] = []
    private var stopped = false

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts a proxy to `127.0.0.1:upstreamPort`, listening on `port` (0: a free one).
    public init(upstreamPort: Int, port: Int = 0) throws {
        self.upstreamPort = upstreamPort
        let (fd, actualPort) = try LoopbackSocket.listening(port: port)
        self.listener = fd
        self.port = actualPort
        LoopbackSocket.acceptLoop(fd) { [self] client in handle(client) }
    }

    deinit { stop() }

    /// Stops listening; a client then gets "connection refused". Exchanges in flight finish on their own.
    public func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Injects `fault` into the next `times` requests matching `method`, a path containing `pathContains` and a
    /// body (inflated, when the request sends it gzip-compressed) containing `bodyContains`.
    public func inject(
        _ fault: NetworkFault, method: String? = nil, pathContains: String? = nil, bodyContains: String? = nil,
        times: Int = 1
    ) {
        lock.withLock {
            rules.append(
                Rule(
                    method: method, pathContains: pathContains, bodyContains: bodyContains, fault: fault,
                    remaining: times))
        }
    }

    /// Injects one of `faults`, chosen with a generator seeded by `seed`, into each request with `probability`.
    public func injectRandomly(seed: UInt64, probability: Double, from faults: [NetworkFault]) {
        lock.withLock { random = (SeededGenerator(seed: seed), probability, faults) }
    }

    /// Forwards everything faithfully from now on.
    public func clearFaults() {
        lock.withLock {
            rules.removeAll()
            random = nil
        }
    }

    /// Every exchange so far, in the order the requests arrived.
    public var log: [ProxiedExchange] { lock.withLock { exchanges } }

    /// How many exchanges got a fault.
    public var faultsInjected: Int { lock.withLock { exchanges.filter { $0.fault != .none }.count } }

    // MARK: - The exchange

    private func decide(method: String, target: String, body: String) -> NetworkFault {
        lock.withLock {
            var fault = NetworkFault.none
            if let index = rules.firstIndex(where: { rule in
                (rule.method.map { $0 == method } ?? true) && (rule.pathContains.map { target.contains($0) } ?? true)
                    && (rule.bodyContains.map { body.contains($0) } ?? true)
            }) {
                fault = rules[index].fault
                rules[index].remaining -= 1
                if rules[index].remaining <= 0 { rules.remove(at: index) }
            } else if var state = random {
                if Double(state.generator.next() % 1_000_000) / 1_000_000 < state.probability, !state.faults.isEmpty {
                    fault = state.faults[Int(state.generator.next() % UInt64(state.faults.count))]
                }
                random = state
            }
            exchanges.append(ProxiedExchange(method: method, target: target, fault: fault))
            return fault
        }
    }

    private func handle(_ client: Int32) {
        defer { close(client) }
        LoopbackSocket.setTimeout(client, seconds: 30)
        guard let request = LoopbackSocket.readMessage(client, isResponse: false) else { return }
        let requestLine = request.head.first ?? ""
        let parts = requestLine.split(separator: " ")
        guard parts.count >= 2 else { return }
        let method = String(parts[0])
        let target = String(parts[1])
        let body =
            Gzip.isGzip(request.body)
            ? ((try? Gzip.decompress(request.body, limit: 64 << 20)) ?? request.body) : request.body
        let fault = decide(method: method, target: target, body: String(decoding: body, as: UTF8.self))
        switch fault {
        case .resetMidRequest:
            // The request was read but never forwarded: to the client the connection dies while it waits, and
            // the server never sees the request.
            LoopbackSocket.reset(client)
            return
        case .status(let code):
            LoopbackSocket.sendAll(client, Self.syntheticResponse(code))
            return
        case .portalPage:
            var page = HTTPMessage(
                head: ["HTTP/1.1 200 OK"],
                body: Array("<html><body><form>Log in to the guest network</form></html>".utf8))
            page.head.append("Content-Type: text/html; charset=utf-8")
            LoopbackSocket.sendAll(client, page.encoded())
            return
        default:
            break
        }
        guard let response = forward(request) else {
            LoopbackSocket.reset(client)
            return
        }
        let isListRequest = method == "GET" && Self.isListTarget(target)
        let pageKey = String(target.split(separator: "?").first ?? "")
        var answer = response
        if isListRequest, response.status == 200 {
            lock.withLock {
                let previous = lastPages[pageKey]
                lastPages[pageKey] = response.encoded()
                if fault == .replayPreviousPage, let previous {
                    answer = HTTPMessage.decodeResponse(previous) ?? response
                }
            }
        }
        let bytes = answer.encoded()
        switch fault {
        case .resetMidResponse:
            LoopbackSocket.sendAll(client, Array(bytes.prefix(max(1, bytes.count / 2))))
            LoopbackSocket.reset(client)
        case .truncatedResponse:
            let headLength = bytes.count - answer.body.count
            LoopbackSocket.sendAll(client, Array(bytes.prefix(headLength + answer.body.count / 2)))
        case .corruptResponse:
            var damaged = answer
            for index in stride(from: 0, to: damaged.body.count, by: max(1, damaged.body.count / 8)) {
                damaged.body[index] ^= 0x5A
            }
            if damaged.body.isEmpty { damaged.body = [0x00] }
            LoopbackSocket.sendAll(client, damaged.encoded())
        case .statusAfterCommit(let code):
            LoopbackSocket.sendAll(client, Self.syntheticResponse(code))
        case .delayAfterCommit(let seconds):
            Thread.sleep(forTimeInterval: seconds)
            LoopbackSocket.sendAll(client, bytes)
        default:
            LoopbackSocket.sendAll(client, bytes)
        }
    }

    /// Sends `request` to the server on a fresh connection and reads the whole answer.
    private func forward(_ request: HTTPMessage) -> HTTPMessage? {
        guard let upstream = LoopbackSocket.connected(port: upstreamPort) else { return nil }
        defer { close(upstream) }
        var outgoing = request
        outgoing.removeHeader("expect")
        guard LoopbackSocket.sendAll(upstream, outgoing.encoded()) else { return nil }
        return LoopbackSocket.readMessage(upstream, isResponse: true)
    }

    private static func isListTarget(_ target: String) -> Bool {
        let path = target.split(separator: "?").first ?? ""
        let segments = path.split(separator: "/")
        return segments.count == 2 && segments[0] == "tables"
    }

    private static func syntheticResponse(_ code: Int) -> [UInt8] {
        var message = HTTPMessage(
            head: ["HTTP/1.1 \(code) Injected"], body: Array("{\"error\":\"injected by the fault proxy\"}".utf8))
        message.head.append("Content-Type: application/json")
        if code == 429 || code == 503 { message.head.append("Retry-After: 1") }
        return message.encoded()
    }
}

/// Blocking loopback sockets for the test servers here (``FaultProxy``, ``HostileServer``).
enum LoopbackSocket {
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

    /// A socket connected to `127.0.0.1:port` with 30-second timeouts, or `nil` when the connection fails.
    static func connected(port: Int) -> Int32? {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { return nil }
        setTimeout(fd, seconds: 30)
        var address = loopback(port: port)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    static func setTimeout(_ fd: Int32, seconds: Int) {
        var value = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Closes with RST instead of FIN (`SO_LINGER` 0), as a crashed peer or a middlebox would.
    static func reset(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    @discardableResult
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
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
}

/// A proxy setup failure.
public struct ProxyError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// An HTTP/1.1 message as the proxy handles it: head lines and a whole body.
struct HTTPMessage: Sendable {
    /// The start line, then `Name: value` lines.
    var head: [String]
    var body: [UInt8]

    var status: Int { Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0 }

    var expectsContinue: Bool { header("expect")?.lowercased() == "100-continue" }

    func header(_ name: String) -> String? {
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == name {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    mutating func removeHeader(_ name: String) {
        head =
            [head[0]]
            + head.dropFirst().filter { line in
                guard let colon = line.firstIndex(of: ":") else { return true }
                return line[..<colon].lowercased() != name
            }
    }

    /// The message with a `Content-Length` body and `Connection: close`.
    func encoded() -> [UInt8] {
        var copy = self
        for name in ["content-length", "connection", "transfer-encoding", "keep-alive"] { copy.removeHeader(name) }
        let isRequest = !(head.first ?? "").hasPrefix("HTTP/")
        if !isRequest || !body.isEmpty
            || ["POST", "PUT", "PATCH"].contains(head.first?.split(separator: " ").first ?? "")
        {
            copy.head.append("Content-Length: \(body.count)")
        }
        copy.head.append("Connection: close")
        return Array((copy.head.joined(separator: "\r\n") + "\r\n\r\n").utf8) + body
    }

    static func decodeResponse(_ bytes: [UInt8]) -> HTTPMessage? {
        guard let end = headEnd(bytes), var message = parseHead(Array(bytes[0..<end])) else { return nil }
        message.body = Array(bytes[(end + 4)...])
        return message
    }

    static func parseHead(_ bytes: [UInt8]) -> HTTPMessage? {
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
        guard let first = lines.first, !first.isEmpty else { return nil }
        return HTTPMessage(head: lines, body: [])
    }

    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    static func lineEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= start + 2 else { return nil }
        for index in start...(bytes.count - 2) where bytes[index] == 13 && bytes[index + 1] == 10 { return index }
        return nil
    }
}
