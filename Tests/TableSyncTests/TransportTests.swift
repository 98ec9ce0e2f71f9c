import Foundation
import GzipCompression
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync

/// The HTTP transport on its own: what it makes of answers that are compressed, damaged, too large, or never
/// come, over real loopback sockets.
@Suite struct TransportTests {
    @Test("a gzip answer is inflated and counted at its size on the wire; damaged gzip is retried; an oversized answer is refused")
    func answerBodies() async throws {
        let text = "{\"items\":[" + Array(repeating: "{\"text\":\"the same words again\"}", count: 2_000).joined(separator: ",") + "]}"
        let packed = try Gzip.compress(Array(text.utf8))
        let calls = Counter()
        let server = try HostileServer { request in
            switch request.target {
            case "/packed":
                return .init(headers: ["Content-Encoding": "gzip"], body: packed)
            case "/damaged":
                // Damaged on the first attempt only: the retry gets the good body.
                return calls.next() == 0 ? .init(headers: ["Content-Encoding": "gzip"], body: Array(packed.prefix(packed.count / 2)))
                                         : .init(headers: ["Content-Encoding": "gzip"], body: packed)
            default:
                return .json(text)
            }
        }
        defer { server.stop() }
        let client = ServerHTTPClient(baseURL: server.baseURL, defaultHeaders: [:], timeout: 10, retryPolicy: Reliability.quickRetries,
                                maxResponseBytes: 100_000)
        let inflated = try await client.send(HTTPRequest(method: "GET", path: "/packed"))
        #expect(inflated.body == Array(text.utf8))
        #expect(inflated.wireBodySize == packed.count)
        #expect(inflated.header("Content-Encoding") == nil)
        let retried = try await client.send(HTTPRequest(method: "GET", path: "/damaged"))
        #expect(retried.body == Array(text.utf8))
        #expect(calls.value == 2, "one damaged answer, one good")

        let small = ServerHTTPClient(baseURL: server.baseURL, defaultHeaders: [:], timeout: 10, retryPolicy: .none, maxResponseBytes: 10_000)
        for path in ["/plain", "/packed"] {
            let error = await #expect(throws: SyncError.self) { try await small.send(HTTPRequest(method: "GET", path: path)) }
            guard case .malformedResponse(_, let reason)? = error else { Issue.record("\(path): \(String(describing: error))"); continue }
            #expect(reason.contains("larger than") || reason.contains("inflates to more than"), "\(path): \(reason)")
        }
    }

    @Test("every request accepts gzip: a page from tablesync-server comes compressed and is read inflated")
    func pagesComeCompressed() async throws {
        let table = uniqueTableName()
        let server = try await LiveServer.start(.sqlite, tables: [table])
        defer { TestBackend.removeFiles(of: server.database) }
        let client = ServerHTTPClient(baseURL: server.baseURL, defaultHeaders: ["ZUMO-API-VERSION": "3.0.0"], timeout: 10, retryPolicy: .none)
        for index in 0..<50 {
            let body = CanonicalJSON.encode(["id": .string("r\(index)"), "text": "the same words in every record"], style: .compact)
            #expect(try await client.send(HTTPRequest(method: "POST", path: "/tables/\(table)", body: body)).status == 201)
        }
        let page = try await client.send(HTTPRequest(method: "GET", path: "/tables/\(table)", query: [("$top", "50")]))
        #expect(try JSONParser.parse(page.body)["items"]?.arrayValue?.count == 50)
        #expect(page.wireBodySize * 3 < page.body.count, "\(page.wireBodySize) bytes on the wire for \(page.body.count)")
        await server.stop()
    }

    @Test("a silent server times out within the limit, and a closed port is refused at once")
    func timeoutsAndRefusals() async throws {
        // A server that takes the request and answers only when the test is over (or after 60 s): only the
        // client's limit can end the wait. (It once answered after 3 s, and on a loaded machine the answer
        // sometimes arrived before the late timer fired.)
        let answerNow = DispatchSemaphore(value: 0)
        let server = try HostileServer { _ in
            _ = answerNow.wait(timeout: .now() + 60)
            return .json("{}")
        }
        defer {
            answerNow.signal()
            server.stop()
        }
        let silent = ServerHTTPClient(baseURL: server.baseURL, defaultHeaders: [:], timeout: 1, retryPolicy: .none)
        let started = Date()
        let error = await #expect(throws: SyncError.self) { try await silent.send(HTTPRequest(method: "GET", path: "/health")) }
        #expect(error == .unreachable(url: server.baseURL, reason: "timed out after 1 attempt"))
        #expect(Date().timeIntervalSince(started) < 30, "the limit ends the wait, not the answer")

        let closed = ServerHTTPClient(baseURL: "http://127.0.0.1:1", defaultHeaders: [:], timeout: 30, retryPolicy: .none)
        let refused = await #expect(throws: SyncError.self) { try await closed.send(HTTPRequest(method: "GET", path: "/health")) }
        #expect(refused == .unreachable(url: "http://127.0.0.1:1", reason: "connection refused after 1 attempt"))
    }
}

/// A thread-safe counter for scripted answers.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    /// The count before this call, then one more.
    func next() -> Int { lock.withLock { defer { count += 1 }; return count } }
    var value: Int { lock.withLock { count } }
}
