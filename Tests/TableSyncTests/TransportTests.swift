import Foundation
import GzipCompression
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync

/// The HTTP transport on its own: which proxy a request takes, and what it makes of answers that are
/// compressed, damaged, too large, or never come, over real loopback sockets.
@Suite struct TransportTests {
    static func target(_ url: String) throws -> ProxyEnvironment.Target { try #require(ProxyEnvironment.Target(url: url)) }

    @Test func proxyChoiceFollowsCurlsVariables() throws {
        let https = try Self.target("https://sync.example.com/tables/todo")
        let http = try Self.target("http://sync.example.com:8080")
        let proxy = ProxyEnvironment.Proxy(host: "proxy.corp", port: 3128, user: nil, password: nil)
        #expect(ProxyEnvironment.proxy(for: https, environment: [:]) == nil)
        #expect(ProxyEnvironment.proxy(for: https, environment: ["https_proxy": "http://proxy.corp:3128"]) == proxy)
        #expect(ProxyEnvironment.proxy(for: https, environment: ["HTTPS_PROXY": "proxy.corp:3128"]) == proxy)
        #expect(ProxyEnvironment.proxy(for: https, environment: ["http_proxy": "proxy.corp:3128"]) == nil, "http_proxy is for http URLs")
        #expect(ProxyEnvironment.proxy(for: http, environment: ["http_proxy": "proxy.corp:3128"]) == proxy)
        #expect(ProxyEnvironment.proxy(for: http, environment: ["HTTP_PROXY": "proxy.corp:3128"]) == nil, "uppercase HTTP_PROXY is ignored, as curl does")
        #expect(ProxyEnvironment.proxy(for: http, environment: ["ALL_PROXY": "proxy.corp:3128"]) == proxy)
        #expect(ProxyEnvironment.proxy(for: https, environment: ["https_proxy": "", "all_proxy": "proxy.corp:3128"]) == proxy, "an empty variable sets nothing")
        #expect(ProxyEnvironment.proxy(for: http, environment: ["http_proxy": "proxy.corp"])?.port == 1080, "curl's default port")
        #expect(ProxyEnvironment.proxy(for: http, environment: ["http_proxy": "proxy.corp:notaport"]) == nil)
    }

    @Test func noProxyAndLoopbackGoDirect() throws {
        let environment = ["https_proxy": "proxy.corp:3128", "no_proxy": "internal.net, .example.com ,db:5432"]
        #expect(ProxyEnvironment.proxy(for: try Self.target("https://sync.example.com"), environment: environment) == nil)
        #expect(ProxyEnvironment.proxy(for: try Self.target("https://example.com"), environment: environment) == nil)
        #expect(ProxyEnvironment.proxy(for: try Self.target("https://a.internal.net/x"), environment: environment) == nil)
        #expect(ProxyEnvironment.proxy(for: try Self.target("https://db"), environment: environment) == nil, "a port in no_proxy is ignored")
        #expect(ProxyEnvironment.proxy(for: try Self.target("https://notexample.com"), environment: environment) != nil, "a suffix matches at a dot only")
        #expect(ProxyEnvironment.proxy(for: try Self.target("https://sync.example.org"), environment: ["https_proxy": "p:1", "NO_PROXY": "*"]) == nil)
        for url in ["http://127.0.0.1:8080", "http://localhost/x", "http://[::1]:80", "https://user:pw@127.0.0.2"] {
            #expect(ProxyEnvironment.proxy(for: try Self.target(url), environment: ["http_proxy": "p:1", "https_proxy": "p:1"]) == nil, "\(url)")
        }
    }

    @Test func proxyCredentialsAndTargetsParse() throws {
        let proxy = ProxyEnvironment.parse("http://sync%40corp:p%3Ass@proxy.corp:8080/")
        #expect(proxy == ProxyEnvironment.Proxy(host: "proxy.corp", port: 8080, user: "sync@corp", password: "p:ss"))
        #expect(ProxyEnvironment.parse("[2001:db8::1]:3128") == ProxyEnvironment.Proxy(host: "2001:db8::1", port: 3128, user: nil, password: nil))
        #expect(ProxyEnvironment.parse("proxy:0") == nil)
        #expect(try Self.target("HTTPS://User@Sync.Example.com:443/tables?x=1") == ProxyEnvironment.Target(url: "https://sync.example.com"))
        for url in ["ftp://host/x", "sync.example.com", "http://", "http://[::1"] {
            #expect(ProxyEnvironment.Target(url: url) == nil, "\(url)")
        }
    }

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
