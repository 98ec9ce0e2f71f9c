import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fake table server on a loopback port that answers every request with what a test scripts.
///
/// A mock, on purpose: `tablesync-server` cannot be made to send hostile output (ids like `../../x`, missing
/// system properties, wrong types, invalid JSON), and a client must survive a server that does.
public final class HostileServer: @unchecked Sendable {
    /// One scripted answer.
    public struct Answer: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]

        public init(status: Int = 200, headers: [String: String] = [:], body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// A JSON answer; `extensions` makes the client take it for a TableSync server (keyset paging).
        public static func json(_ text: String, status: Int = 200, extensions: Bool = true) -> Answer {
            Answer(
                status: status, headers: extensions ? ["X-TableSync-Extensions": "gzip-request"] : [:],
                body: Array(text.utf8))
        }
    }

    /// A request the server saw.
    public struct Request: Sendable {
        public var method: String
        public var target: String
        /// The request's `Name: value` header lines, in order.
        public var headerLines: [String]
        public var body: [UInt8]

        /// The values of header `name` (any case), in order.
        public func headers(_ name: String) -> [String] {
            headerLines.compactMap { line in
                guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == name.lowercased() else {
                    return nil
                }
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
    }

    private let listener: Int32
    public let port: Int
    private let answer: @Sendable (Request) -> Answer
    // Guarded by `lock`: the connection threads append.
    private let lock = NSLock()
    private var seen: [Request] = []

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts answering every request with `answer`.
    public init(answer: @escaping @Sendable (Request) -> Answer) throws {
        self.answer = answer
        (listener, port) = try LoopbackSocket.listening(port: 0)
        LoopbackSocket.acceptLoop(listener) { [self] client in handle(client) }
    }

    /// The requests so far.
    public var requests: [Request] { lock.withLock { seen } }

    public func stop() { LoopbackSocket.closeListener(listener) }

    private func handle(_ client: Int32) {
        defer { close(client) }
        LoopbackSocket.setTimeout(client, seconds: 30)
        guard let message = LoopbackSocket.readMessage(client, isResponse: false) else { return }
        let parts = (message.head.first ?? "").split(separator: " ")
        guard parts.count >= 2 else { return }
        let request = Request(
            method: String(parts[0]), target: String(parts[1]), headerLines: Array(message.head.dropFirst()),
            body: message.body)
        lock.withLock { seen.append(request) }
        let scripted = answer(request)
        var response = HTTPMessage(
            head: ["HTTP/1.1 \(scripted.status) Scripted", "Content-Type: application/json"], body: scripted.body)
        for (name, value) in scripted.headers.sorted(by: { $0.key < $1.key }) {
            response.head.append("\(name): \(value)")
        }
        LoopbackSocket.sendAll(client, response.encoded())
    }
}
