import Foundation
import GzipCompression
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The fault mode of ``LoopbackProxy``: each connection carries one HTTP/1.1 exchange (answers say
/// `Connection: close`), forwarded to the server on a fresh connection, with a ``NetworkFault`` injected.
///
/// Blocking sockets on a thread per connection let faults land at exact points of the exchange: before the server
/// sees the request, or after it committed and before the client sees the answer. Faults come from a script
/// (``inject(_:method:pathContains:bodyContains:times:)``) and, when that has nothing for a request, from a seeded
/// random choice (``injectRandomly(seed:probability:from:)``).
final class FaultInjector: @unchecked Sendable {
    // Mutable state is guarded by `lock`; the injector is shared with the connection threads.
    private struct Rule {
        var method: String?
        var pathContains: String?
        var bodyContains: String?
        var fault: NetworkFault
        var remaining: Int
    }

    private let upstreamPort: Int
    private let lock = NSLock()
    private var rules: [Rule] = []
    private var random: (generator: SeededGenerator, probability: Double, faults: [NetworkFault])?
    private var lastPages: [String: [UInt8]] = [:]
    private var exchanges: [ProxiedExchange] = []

    init(upstreamPort: Int) {
        self.upstreamPort = upstreamPort
    }

    func inject(_ fault: NetworkFault, method: String?, pathContains: String?, bodyContains: String?, times: Int) {
        lock.withLock {
            rules.append(
                Rule(
                    method: method, pathContains: pathContains, bodyContains: bodyContains, fault: fault,
                    remaining: times))
        }
    }

    func injectRandomly(seed: UInt64, probability: Double, from faults: [NetworkFault]) {
        lock.withLock { random = (SeededGenerator(seed: seed), probability, faults) }
    }

    func clearFaults() {
        lock.withLock {
            rules.removeAll()
            random = nil
        }
    }

    var log: [ProxiedExchange] { lock.withLock { exchanges } }

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

    /// Carries the one exchange of `client`'s connection, with the fault the script decides, then closes it.
    func serve(_ client: Int32) {
        defer { close(client) }
        LoopbackSocket.setTimeout(client, seconds: 30)
        guard let request = LoopbackSocket.readMessage(client, isResponse: false) else { return }
        let parts = (request.head.first ?? "").split(separator: " ")
        guard parts.count >= 2 else { return }
        let method = String(parts[0])
        let target = String(parts[1])
        let body =
            Gzip.isGzip(request.body)
            ? ((try? Gzip.decompress(request.body, limit: 64 << 20)) ?? request.body) : request.body
        let fault = decide(method: method, target: target, body: String(decoding: body, as: UTF8.self))
        if answerWithoutForwarding(client, fault: fault) { return }
        guard let response = forward(request) else {
            LoopbackSocket.reset(client)
            return
        }
        let answer = rememberingPages(response, method: method, target: target, replay: fault == .replayPreviousPage)
        sendAnswer(answer, to: client, fault: fault)
    }

    /// Answers the faults that never reach the server; `false` when the request is to be forwarded.
    private func answerWithoutForwarding(_ client: Int32, fault: NetworkFault) -> Bool {
        switch fault {
        case .resetMidRequest:
            // The request was read but never forwarded: to the client the connection dies while it waits, and
            // the server never sees the request.
            LoopbackSocket.reset(client)
        case .status(let code):
            LoopbackSocket.sendAll(client, Self.syntheticResponse(code))
        case .portalPage:
            var page = HTTPMessage(
                head: ["HTTP/1.1 200 OK"],
                body: Array("<html><body><form>Log in to the guest network</form></html>".utf8))
            page.head.append("Content-Type: text/html; charset=utf-8")
            LoopbackSocket.sendAll(client, page.encoded())
        default:
            return false
        }
        return true
    }

    /// Keeps each table's last page, so that `replay` can answer a list request with the previous one instead.
    private func rememberingPages(
        _ response: HTTPMessage, method: String, target: String, replay: Bool
    )
        -> HTTPMessage
    {
        guard method == "GET", Self.isListTarget(target), response.status == 200 else { return response }
        let pageKey = String(target.split(separator: "?").first ?? "")
        return lock.withLock {
            let previous = lastPages[pageKey]
            lastPages[pageKey] = response.encoded()
            guard replay, let previous else { return response }
            return HTTPMessage.decodeResponse(previous) ?? response
        }
    }

    /// Sends the server's answer to the client, damaged, held or replaced as `fault` says.
    private func sendAnswer(_ answer: HTTPMessage, to client: Int32, fault: NetworkFault) {
        let bytes = answer.encoded()
        switch fault {
        case .resetMidResponse:
            LoopbackSocket.sendAll(client, bytes.prefix(max(1, bytes.count / 2)))
            LoopbackSocket.reset(client)
        case .truncatedResponse:
            let headLength = bytes.count - answer.body.count
            LoopbackSocket.sendAll(client, bytes.prefix(headLength + answer.body.count / 2))
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
