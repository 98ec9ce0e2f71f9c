import Foundation
import GzipCompression
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync

/// The HTTP transports on their own, over real loopback sockets: what they make of answers that are compressed,
/// damaged, too large, or never come; cancellation; and the settings of curl's environment (proxy, authorities)
/// that libcurl honours. The tests of the transport itself run against both transports (``TransportUnderTest``);
/// those of curl's environment, and of the `tablesync` program, against libcurl alone.
@Suite struct TransportTests {
    @Test(
        """
        a gzip answer is inflated and counted at its size on the wire; damaged gzip is retried; an oversized answer is \
        refused
        """,
        arguments: TransportUnderTest.allCases)
    func answerBodies(_ carrier: TransportUnderTest) async throws {
        let text =
            "{\"items\":["
            + Array(repeating: "{\"text\":\"the same words again\"}", count: 2_000).joined(separator: ",") + "]}"
        let packed = try Gzip.compress(Array(text.utf8))
        let calls = Counter()
        let server = try HostileServer { request in
            switch request.target {
            case "/packed":
                return .init(headers: ["Content-Encoding": "gzip"], body: packed)
            case "/damaged":
                // Damaged on the first attempt only: the retry gets the good body.
                return calls.next() == 0
                    ? .init(headers: ["Content-Encoding": "gzip"], body: Array(packed.prefix(packed.count / 2)))
                    : .init(headers: ["Content-Encoding": "gzip"], body: packed)
            default:
                return .json(text)
            }
        }
        defer { server.stop() }
        let client = ServerHTTPClient(
            baseURL: server.baseURL, defaultHeaders: [:], timeout: 10, retryPolicy: Reliability.quickRetries,
            maxResponseBytes: 100_000, transport: carrier.transport)
        let inflated = try await client.send(HTTPRequest(method: "GET", path: "/packed"))
        #expect(inflated.body == Array(text.utf8))
        #expect(inflated.wireBodySize == packed.count, "URLSession counts the Content-Length the server sent")
        #expect(inflated.header("Content-Encoding") == nil)
        let retried = try await client.send(HTTPRequest(method: "GET", path: "/damaged"))
        switch carrier {
        case .curl:
            #expect(retried.body.count == text.utf8.count && retried.body == Array(text.utf8))
            #expect(calls.value == 2, "one damaged answer, one good")
        case .urlSession:
            // URLSession inflates answers itself, and FoundationNetworking's hands over what a damaged stream
            // inflated to, without an error: only the reader of the body can tell (a JSON answer that does not
            // parse ends the run with exit 4), and the request is not sent again.
            #expect(retried.body.count < text.utf8.count, "the damaged body, as far as it inflated")
            #expect(calls.value == 1)
        }

        let small = ServerHTTPClient(
            baseURL: server.baseURL, defaultHeaders: [:], timeout: 10, retryPolicy: .none, maxResponseBytes: 10_000,
            transport: carrier.transport)
        for path in ["/plain", "/packed"] {
            let error = await #expect(throws: SyncError.self) {
                try await small.send(HTTPRequest(method: "GET", path: path))
            }
            guard case .malformedResponse(_, let reason)? = error else {
                Issue.record("\(path): \(String(describing: error))")
                continue
            }
            #expect(reason.contains("larger than") || reason.contains("inflates to more than"), "\(path): \(reason)")
        }
    }

    @Test(
        "every request accepts gzip: a page from tablesync-server comes compressed and is read inflated",
        arguments: TransportUnderTest.allCases)
    func pagesComeCompressed(_ carrier: TransportUnderTest) async throws {
        let table = uniqueTableName()
        let server = try await LiveServer.start(.sqlite, tables: [table])
        defer { TestBackend.removeFiles(of: server.database) }
        let client = ServerHTTPClient(
            baseURL: server.baseURL, defaultHeaders: ["ZUMO-API-VERSION": "3.0.0"], timeout: 10, retryPolicy: .none,
            transport: carrier.transport)
        for index in 0..<50 {
            let body = CanonicalJSON.encode(
                ["id": .string("r\(index)"), "text": "the same words in every record"], style: .compact)
            #expect(
                try await client.send(HTTPRequest(method: "POST", path: "/tables/\(table)", body: body)).status == 201)
        }
        let page = try await client.send(HTTPRequest(method: "GET", path: "/tables/\(table)", query: [("$top", "50")]))
        #expect(try JSONParser.parse(page.body)["items"]?.arrayValue?.count == 50)
        #expect(
            page.wireBodySize * 3 < page.body.count, "\(page.wireBodySize) bytes on the wire for \(page.body.count)")
        await server.stop()
    }

    @Test(
        "a silent server times out within the limit, and a closed port is refused at once",
        arguments: TransportUnderTest.endingWaitsAtOnce)
    func timeoutsAndRefusals(_ carrier: TransportUnderTest) async throws {
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
        let silent = ServerHTTPClient(
            baseURL: server.baseURL, defaultHeaders: [:], timeout: 1, retryPolicy: .none, transport: carrier.transport)
        let started = Date()
        let error = await #expect(throws: SyncError.self) {
            try await silent.send(HTTPRequest(method: "GET", path: "/health"))
        }
        #expect(error == .unreachable(url: server.baseURL, reason: "timed out after 1 attempt"))
        #expect(Date().timeIntervalSince(started) < 30, "the limit ends the wait, not the answer")

        let closed = ServerHTTPClient(
            baseURL: "http://127.0.0.1:1", defaultHeaders: [:], timeout: 30, retryPolicy: .none,
            transport: carrier.transport)
        let refused = await #expect(throws: SyncError.self) {
            try await closed.send(HTTPRequest(method: "GET", path: "/health"))
        }
        #expect(refused == .unreachable(url: "http://127.0.0.1:1", reason: "connection refused after 1 attempt"))
    }

    /// This process's environment without anything that sets libcurl up (proxies, authorities, a token), with
    /// `settings` added: what a `tablesync` child sees in these tests.
    static func environment(_ settings: [String: String]) -> [String: String] {
        var clean = ProcessInfo.processInfo.environment
        for name in [
            "http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
            "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR", "TABLESYNC_TOKEN"
        ] { clean[name] = nil }
        return clean.merging(settings) { $1 }
    }

    @Test(
        """
        a write's body goes at once (no Expect: 100-continue) as JSON; every request accepts gzip; a request's header \
        replaces a default one however spelt
        """,
        arguments: TransportUnderTest.allCases)
    func requestHeaders(_ carrier: TransportUnderTest) async throws {
        let server = try HostileServer { _ in .json("{}") }
        defer { server.stop() }
        let client = ServerHTTPClient(
            baseURL: server.baseURL, defaultHeaders: ["X-ZUMO-AUTH": "default"], timeout: 10, retryPolicy: .none,
            transport: carrier.transport)
        let body = Array(repeating: UInt8(ascii: "a"), count: 2 << 20)
        #expect(
            try await client.send(
                HTTPRequest(method: "POST", path: "/tables/todo", headers: ["x-zumo-auth": "own"], body: body)
            ).status == 200)
        let seen = try #require(server.requests.first)
        // When libcurl asks for `100 Continue` differs between versions (the curl 7.88 command does for bodies over
        // 1 MiB; the library as configured here did not, even without the guard): no version may.
        #expect(seen.headers("Expect").isEmpty)
        #expect(seen.headers("Content-Type") == ["application/json"])
        #expect(seen.headers("Accept-Encoding") == ["gzip"])
        #expect(seen.headers("X-ZUMO-AUTH") == ["own"])
        #expect(seen.body == body)
    }

    /// Stands for a cron job whose machine keeps the server's credentials in `~/.netrc`, as curl users do.
    @Test("tablesync sends the credentials ~/.netrc holds for the host, as curl does; a token wins over them")
    func netrcCredentials() async throws {
        let directory = TemporaryDirectory()
        let server = try HostileServer { _ in .json("[]", extensions: false) }
        defer { server.stop() }
        try directory.write("home/.netrc", "machine 127.0.0.1 login sync password s3cret\n")
        let tablesync = builtProduct("tablesync")
        let store = directory.file("store")
        #expect(
            try await runProgram(tablesync, ["-C", store, "init", "--remote", server.baseURL, "--table", "todo"]).status
                == 0)

        try await runProgram(
            tablesync, ["-C", store, "pull", "todo"], environment: Self.environment(["HOME": directory.file("home")]))
        let withNetrc = server.requests
        #expect(!withNetrc.isEmpty)
        let basic = "Basic " + Data("sync:s3cret".utf8).base64EncodedString()
        #expect(
            withNetrc.allSatisfy { $0.headers("Authorization") == [basic] },
            "\(withNetrc.map { $0.headers("Authorization") })")

        try await runProgram(
            tablesync, ["-C", store, "pull", "todo"],
            environment: Self.environment(["HOME": directory.file("home"), "TABLESYNC_TOKEN": "token"]))
        let withToken = server.requests.dropFirst(withNetrc.count)
        #expect(!withToken.isEmpty)
        #expect(
            withToken.allSatisfy { $0.headers("Authorization") == ["Bearer token"] },
            "\(withToken.map { $0.headers("Authorization") })")
    }

    @Test(
        "a cancelled request ends at once, and many requests are in flight together on the one transport",
        arguments: TransportUnderTest.endingWaitsAtOnce)
    func cancellationAndConcurrency(_ carrier: TransportUnderTest) async throws {
        let answerNow = DispatchSemaphore(value: 0)
        let server = try HostileServer { request in
            if request.target == "/silent" { _ = answerNow.wait(timeout: .now() + 60) }
            return .json("{\"path\":\"\(request.target)\"}")
        }
        defer {
            answerNow.signal()
            server.stop()
        }
        let client = ServerHTTPClient(
            baseURL: server.baseURL, defaultHeaders: [:], timeout: 30, retryPolicy: .none, transport: carrier.transport)
        let waiting = Task { try await client.send(HTTPRequest(method: "GET", path: "/silent")) }
        while !server.requests.contains(where: { $0.target == "/silent" }) {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        let cancelledAt = ContinuousClock.now
        waiting.cancel()
        let outcome = await waiting.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(ContinuousClock.now - cancelledAt < .seconds(10), "the cancellation ends the wait, not the 30 s limit")

        // While nothing answers /silent any more, 16 requests at once all come back, each with its own answer.
        let paths = try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<16 {
                group.addTask {
                    try JSONParser.parse(try await client.send(HTTPRequest(method: "GET", path: "/r\(index)")).body)[
                        "path"]?.stringValue
                }
            }
            return try await group.reduce(into: Set<String?>()) { $0.insert($1) }
        }
        #expect(paths == Set((0..<16).map { "/r\($0)" }))
    }

    @Test(
        """
        the certificate authorities come from CURL_CA_BUNDLE, else SSL_CERT_FILE and SSL_CERT_DIR, as the curl command \
        reads them
        """
    )
    func certificateAuthorityVariables() {
        #expect(CertificateAuthorities(environment: [:]) == CertificateAuthorities(environment: ["SSL_CERT_FILE": ""]))
        let both = CertificateAuthorities(environment: ["SSL_CERT_FILE": "/a.pem", "SSL_CERT_DIR": "/certs"])
        #expect(both.file == "/a.pem" && both.directory == "/certs")
        let bundle = CertificateAuthorities(environment: [
            "CURL_CA_BUNDLE": "/b.pem", "SSL_CERT_FILE": "/a.pem", "SSL_CERT_DIR": "/certs"
        ])
        #expect(bundle.file == "/b.pem" && bundle.directory == nil, "CURL_CA_BUNDLE wins alone")
    }

    /// Stands for a machine behind a company proxy talking to a server whose certificate a company authority
    /// signed: `https_proxy` and `SSL_CERT_FILE` set for cron, as they are for `curl`.
    @Test(
        """
        tablesync takes its proxy from https_proxy and its authority from SSL_CERT_FILE; an untrusted certificate \
        stops at once
        """
    )
    func proxyAndAuthorityFromTheEnvironment() async throws {
        let directory = TemporaryDirectory()
        let authority = try await TestAuthority.make(in: directory.path)
        let table = uniqueTableName()
        let server = try await LiveServer.start(.sqlite, tables: [table], tls: try authority.serverConfiguration())
        defer { TestBackend.removeFiles(of: server.database) }
        let proxy = try LoopbackProxy(.connect)
        defer { proxy.stop() }
        let tablesync = builtProduct("tablesync")
        let environment = Self.environment
        let writer = directory.file("writer")
        let reader = directory.file("reader")
        for store in [writer, reader] {
            #expect(
                try await runProgram(tablesync, ["-C", store, "init", "--remote", server.baseURL, "--table", table])
                    .status == 0)
        }
        #expect(
            try await runProgram(
                tablesync, ["-C", writer, "insert", table, #"{"id": "a", "text": "through the tunnel"}"#]
            ).status == 0)

        let untrusted = try await runProgram(
            tablesync, ["-C", writer, "push"], environment: environment(["https_proxy": proxy.baseURL]))
        #expect(untrusted.status == 2, "a setting to change, not a failure that passes: \(untrusted.stderr)")
        #expect(
            untrusted.stderr.contains("TLS certificate of the server at \(server.baseURL) is not trusted")
                && untrusted.stderr.contains("SSL_CERT_FILE"), "\(untrusted.stderr)")
        #expect(proxy.tunnels == ["localhost:\(server.port)"], "one attempt through the proxy, not retried")

        let pushed = try await runProgram(
            tablesync, ["-C", writer, "push"],
            environment: environment(["https_proxy": proxy.baseURL, "SSL_CERT_FILE": authority.authorityFile]))
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let tunnelsAfterPush = proxy.tunnels.count
        #expect(tunnelsAfterPush >= 2)
        #expect(Set(proxy.tunnels) == ["localhost:\(server.port)"])

        let direct = try await runProgram(
            tablesync, ["-C", reader, "pull", table],
            environment: environment([
                "https_proxy": proxy.baseURL, "no_proxy": "localhost",
                "CURL_CA_BUNDLE": authority.authorityFile
            ]))
        #expect(direct.status == 0, "\(direct.stderr)")
        #expect(proxy.tunnels.count == tunnelsAfterPush, "no_proxy exempts the host")
        let pulled = try await runProgram(tablesync, ["-C", reader, "query", table, "--filter", "id eq 'a'"])
        #expect(pulled.stdout.contains("through the tunnel"), "\(pulled.stdout)")
        await server.stop()
    }
}

/// A thread-safe counter for scripted answers.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    /// The count before this call, then one more.
    func next() -> Int {
        lock.withLock {
            defer { count += 1 }
            return count
        }
    }
    var value: Int { lock.withLock { count } }
}

/// A transport the tests of ``TransportTests`` run against: libcurl, what `tablesync` uses on Linux, and
/// `URLSession`, what it uses on Apple platforms (FoundationNetworking's on Linux).
enum TransportUnderTest: String, CaseIterable, CustomTestStringConvertible {
    case curl
    case urlSession

    static var allCases: [TransportUnderTest] {
        #if canImport(Darwin)
        [.urlSession]
        #else
        [.curl, .urlSession]
        #endif
    }

    /// The transports whose time limit and cancellation end a wait at once. Not FoundationNetworking's
    /// `URLSession`: it polls while it waits, and in a loaded run of the whole suite its time limit and a
    /// cancellation ended the wait 16–58 s late (alone, at once), while its polling starved the other tests.
    static var endingWaitsAtOnce: [TransportUnderTest] {
        #if canImport(Darwin)
        [.urlSession]
        #else
        [.curl]
        #endif
    }

    var transport: any HTTPTransport {
        #if canImport(Darwin)
        URLSessionTransport.shared
        #else
        self == .curl ? CurlTransport.shared : URLSessionTransport.shared
        #endif
    }

    var testDescription: String { self == .curl ? "libcurl" : "URLSession" }
}
