import Foundation
import SyncProtocol
@testable import TableSyncServer
import Testing
import TestSupport

/// Careless and hostile clients over raw TCP against a live server: pipelined requests, heads and bodies sent too
/// slowly or never, a `Content-Length` far over the limit, HTTP/1.0, bytes that are not HTTP, more connections than
/// allowed. Time limits are short here so that each case takes about a second; a bound a test checks is the limit
/// plus a grace for a loaded machine, a behaviour rather than a benchmark.
@Suite("Hostile connections")
struct HostileConnectionTests {
    static let headerTimeout = Duration.milliseconds(600)
    static let bodyTimeout = Duration.milliseconds(600)
    static let idleTimeout = Duration.milliseconds(900)
    /// What a loaded machine may add to a time limit before the server acts on it. The in-process servers' tasks
    /// can wait seconds for a thread in the whole suite: at 3 s, four of these closes came late in one CI run, all at
    /// once. A server that never closes still fails; one that closes in time costs no more.
    static let grace = 10.0

    private static func post(_ table: String, id: String, extra: String = "") -> String {
        let body = "{\"id\":\"\(id)\",\"text\":\"\(id)\"}"
        return
            """
            POST /tables/\(table) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\nContent-Type: \
            application/json\r\n\(extra)Content-Length: \(body.utf8.count)\r\n\r\n\(body)
            """
    }

    private static func get(_ target: String, version: String = "HTTP/1.1", extra: String = "") -> String {
        "GET \(target) \(version)\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\n\(extra)\r\n"
    }

    private static func connect(_ server: LiveServer) throws -> RawHTTPConnection {
        try #require(RawHTTPConnection(port: server.port))
    }

    private static func errorMessage(_ answer: RawHTTPConnection.Answer?) -> String? {
        answer.flatMap { try? JSONParser.parse($0.body) }.flatMap(ProtocolErrorBody.message(in:))
    }

    /// Expects the last answer on `connection` within `seconds`: `status`, a JSON error mentioning `word`,
    /// `Connection: close`, and the connection closed after it.
    private static func expectLastAnswer(
        _ connection: RawHTTPConnection, within seconds: Double, status: Int, mentioning word: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let answer = await connection.readAnswer(within: seconds)
        #expect(answer?.status == status, sourceLocation: sourceLocation)
        #expect(
            errorMessage(answer)?.contains(word) == true, "\(answer?.text ?? "no answer")",
            sourceLocation: sourceLocation)
        #expect(answer?.header("connection") == "close", sourceLocation: sourceLocation)
        #expect(await connection.waitForClose(within: grace), sourceLocation: sourceLocation)
    }

    @Test("pipelined requests are each answered, in order, and the connection goes on", arguments: Backend.available)
    func pipelining(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table], configure: { $0.maxBodySize = 4096 }) { server in
            let connection = try Self.connect(server)
            await connection.send(
                Self.post(table, id: "a") + Self.post(table, id: "b") + Self.get("/tables/\(table)/a")
                    + Self.post(table, id: "c"))
            var statuses: [Int] = []
            var locations: [String] = []
            for _ in 0..<4 {
                let answer = try #require(await connection.readAnswer(within: 10), "answers so far: \(statuses)")
                statuses.append(answer.status)
                locations.append(answer.header("location") ?? "")
            }
            #expect(statuses == [201, 201, 200, 201])
            // Absolute, from the request's Host.
            #expect(
                locations.filter { !$0.isEmpty }
                    == ["a", "b", "c"].map { "http://127.0.0.1/tables/\(table)/\($0)" })
            await connection.send(Self.get("/tables/\(table)"))
            let list = try #require(await connection.readAnswer(within: 10))
            #expect(try JSONParser.parse(list.body)["items"]?.arrayValue?.count == 3)
        }
    }

    @Test("a head sent too slowly is answered 408 and the connection closed", arguments: Backend.available)
    func slowHead(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table], configure: { $0.headerTimeout = Self.headerTimeout }) {
            server in
            let connection = try Self.connect(server)
            await connection.send("GET /tables/\(table) HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            // Time is the behaviour: a head trickled a line every 250 ms, past the header timeout.
            for _ in 0..<3 {
                try await Task.sleep(for: .milliseconds(250))
                await connection.send("X-Slow: a\r\n")
            }
            await Self.expectLastAnswer(
                connection, within: Self.headerTimeout / .seconds(1) + Self.grace, status: 408, mentioning: "headers")
        }
    }

    @Test(
        "a body sent too slowly is answered 408 and the connection closed; nothing is stored",
        arguments: Backend.available)
    func slowBody(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table], configure: { $0.bodyTimeout = Self.bodyTimeout }) { server in
            let connection = try Self.connect(server)
            await connection.send(
                """
                POST /tables/\(table) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\nContent-Length: \
                100\r\n\r\n{\"id\":\"slow\"
                """
            )
            await Self.expectLastAnswer(
                connection, within: Self.bodyTimeout / .seconds(1) + Self.grace, status: 408, mentioning: "body")
            let check = try Self.connect(server)
            await check.send(Self.get("/tables/\(table)/slow"))
            #expect(await check.readAnswer(within: 10)?.status == 404)
        }
    }

    @Test(
        "a connection without requests is closed after the idle time, before and after a request",
        arguments: Backend.available)
    func idle(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table], configure: { $0.idleTimeout = Self.idleTimeout }) { server in
            let silent = try Self.connect(server)
            #expect(await silent.waitForClose(within: Self.idleTimeout / .seconds(1) + Self.grace))
            let kept = try Self.connect(server)
            await kept.send(Self.get("/tables/\(table)"))
            #expect(await kept.readAnswer(within: 10)?.status == 200)
            #expect(await kept.waitForClose(within: Self.idleTimeout / .seconds(1) + Self.grace))
        }
    }

    @Test(
        "a Content-Length over the limit is answered 413 at once, without waiting for the body",
        arguments: Backend.available)
    func hugeContentLength(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table], configure: { $0.maxBodySize = 4096 }) { server in
            let connection = try Self.connect(server)
            await connection.send(
                """
                POST /tables/\(table) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\nContent-Length: \
                999999999999\r\n\r\n{
                """
            )
            // Well under the body timeout (60 s): the answer does not wait for the body.
            await Self.expectLastAnswer(connection, within: 10, status: 413, mentioning: "4096")
        }
    }

    @Test(
        "HTTP/1.0 is answered with Connection: close and the connection closed, unless it asks for keep-alive",
        arguments: Backend.available)
    func http10(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table], configure: { $0.maxBodySize = 4096 }) { server in
            let closing = try Self.connect(server)
            await closing.send(Self.get("/tables/\(table)", version: "HTTP/1.0"))
            let answer = await closing.readAnswer(within: 10)
            #expect(answer?.status == 200)
            #expect(answer?.header("connection")?.lowercased() == "close")
            #expect(await closing.waitForClose(within: Self.grace))

            let kept = try Self.connect(server)
            await kept.send(Self.get("/tables/\(table)", version: "HTTP/1.0", extra: "Connection: keep-alive\r\n"))
            #expect(await kept.readAnswer(within: 10)?.header("connection")?.lowercased() != "close")
            await kept.send(Self.get("/tables/\(table)", extra: "Connection: Keep-Alive, CLOSE\r\n"))
            #expect(await kept.readAnswer(within: 10)?.header("connection")?.lowercased() == "close")
            #expect(await kept.waitForClose(within: Self.grace))
        }
    }

    @Test("bytes that are not HTTP get a JSON 400, headers over the limit a JSON 431", arguments: Backend.available)
    func notHTTP(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table], configure: { $0.maxBodySize = 4096 }) { server in
            let garbage = try Self.connect(server)
            await garbage.send("HELLO\u{1}THERE /\r\n\r\n")
            await Self.expectLastAnswer(garbage, within: 10, status: 400, mentioning: "HTTP")

            let huge = try Self.connect(server)
            await huge.send(Self.get("/tables/\(table)", extra: "X-Big: \(String(repeating: "a", count: 100_000))\r\n"))
            await Self.expectLastAnswer(huge, within: 10, status: 431, mentioning: "headers")
        }
    }

    @Test("beyond the connection limit a connection waits until another closes", arguments: Backend.available)
    func connectionLimit(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table], configure: { $0.maxConnections = 2 }) { server in
            let first = try Self.connect(server)
            let second = try Self.connect(server)
            for connection in [first, second] {
                await connection.send(Self.get("/tables/\(table)"))
                #expect(await connection.readAnswer(within: 10)?.status == 200)
            }
            let third = try Self.connect(server)
            await third.send(Self.get("/tables/\(table)"))
            #expect(await third.readAnswer(within: 0.3) == nil, "answered beyond the limit")
            first.closeSocket()
            #expect(await third.readAnswer(within: 10)?.status == 200)
        }
    }

    @Test(
        "an HTTP/1.1 request without Host, or with two, is answered 400 and the connection closed; HTTP/1.0 needs none",
        arguments: Backend.available)
    func hostHeader(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table]) { server in
            let without = try Self.connect(server)
            await without.send("GET /tables/\(table) HTTP/1.1\r\nZUMO-API-VERSION: 3.0.0\r\n\r\n")
            await Self.expectLastAnswer(without, within: Self.grace, status: 400, mentioning: "Host")
            let twice = try Self.connect(server)
            await twice.send(Self.get("/tables/\(table)", extra: "Host: example.com\r\n"))
            await Self.expectLastAnswer(twice, within: Self.grace, status: 400, mentioning: "Host")
            let old = try Self.connect(server)
            await old.send("GET /tables/\(table) HTTP/1.0\r\nZUMO-API-VERSION: 3.0.0\r\n\r\n")
            #expect(await old.readAnswer(within: Self.grace)?.status == 200)
        }
    }

    // MARK: Chunked bodies

    /// Chunked bodies whose framing is broken, each holding the record `id`: a chunk size that is not hexadecimal,
    /// a size line ended by a bare LF, a chunk not followed by CRLF.
    static func brokenChunkedBodies(id: String) -> [(name: String, body: String)] {
        let record = "{\"id\":\"\(id)\"}"
        let size = String(record.utf8.count, radix: 16)
        return [
            ("a chunk size that is not hexadecimal", "zz\r\n\(record)\r\n0\r\n\r\n"),
            ("a size line ended by a bare LF", "\(size)\n\(record)\r\n0\r\n\r\n"),
            ("a chunk not followed by CRLF", "\(size)\r\n\(record)XX0\r\n\r\n")
        ]
    }

    /// A chunk whose size, 2⁶⁴ − 1 bytes, fits NIO's decoder's 64-bit count but no body the server takes.
    static func tooLargeChunk(id: String) -> String { "ffffffffffffffff\r\n{\"id\":\"\(id)\"}\r\n0\r\n\r\n" }

    private static func postChunked(_ table: String, body: String) -> String {
        """
        POST /tables/\(table) HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\nContent-Type: \
        application/json\r\nTransfer-Encoding: chunked\r\n\r\n\(body)
        """
    }

    @Test(
        "a chunked body whose framing is broken is answered 400 and the connection closed; nothing is stored",
        arguments: Backend.available)
    func brokenChunkedBody(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table]) { server in
            for (index, broken) in Self.brokenChunkedBodies(id: "broken").enumerated() {
                let id = "broken\(index)"
                let connection = try Self.connect(server)
                await connection.send(Self.postChunked(table, body: broken.body.replacing("broken", with: id)))
                let answer = await connection.readAnswer(within: Self.grace)
                #expect(answer?.status == 400, "\(broken.name): \(answer?.text ?? "no answer")")
                #expect(
                    Self.errorMessage(answer)?.contains("not valid HTTP/1.1") == true,
                    "\(broken.name): \(answer?.text ?? "no answer")")
                #expect(await connection.waitForClose(within: Self.grace), "\(broken.name): left open")
                let check = try Self.connect(server)
                await check.send(Self.get("/tables/\(table)/\(id)"))
                #expect(await check.readAnswer(within: 10)?.status == 404, "\(broken.name): stored")
            }
        }
    }

    @Test(
        "30 broken chunked bodies against --max-connections 20: each answered 400 or closed, /health answers",
        arguments: Backend.available)
    func brokenChunkedBodiesDoNotHoldConnections(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table], configure: { $0.maxConnections = 20 }) { server in
            var connections: [RawHTTPConnection] = []
            for index in 0..<30 {
                let connection = try Self.connect(server)
                let id = "b\(index)"
                let bodies = Self.brokenChunkedBodies(id: id).map(\.body) + [Self.tooLargeChunk(id: id)]
                connection.sendNow(Self.postChunked(table, body: bodies[index % bodies.count]))
                connections.append(connection)
            }
            // The attacker keeps every connection open: the server must answer and close them itself, or /health,
            // behind them, is never answered. On a quiet machine it answers at once; the grace is for a loaded one
            // (the whole suite in parallel once took over 1 s).
            let health = try Self.connect(server)
            health.sendNow(Self.get(TablePath.health))
            #expect(await health.readAnswer(within: Self.grace)?.status == 200, "/health did not answer")
            for (index, connection) in connections.enumerated() {
                // Well under the body timeout (60 s): nothing waits for bytes that cannot come.
                let answer = await connection.readAnswer(within: Self.grace)
                #expect(answer == nil || answer?.status == 400, "connection \(index): \(answer?.status ?? 0)")
                #expect(await connection.waitForClose(within: Self.grace), "connection \(index) left open")
            }
        }
    }

    @Test(
        "a chunk announced larger than any body is refused at once: 400 past a count's digits, 413 past the limit",
        arguments: Backend.available)
    func tooLargeChunk(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withLiveServer(backend, tables: [table], configure: { $0.maxBodySize = 4096 }) { server in
            // Well under the body timeout (60 s): the answers do not wait for the chunks' bytes.
            let huge = try Self.connect(server)
            huge.sendNow(Self.postChunked(table, body: Self.tooLargeChunk(id: "huge")))
            await Self.expectLastAnswer(huge, within: Self.grace, status: 400, mentioning: "hexadecimal digits")
            let over = try Self.connect(server)
            over.sendNow(Self.postChunked(table, body: "10\r\n{\"id\":\"over\"}   \r\n1001\r\n"))
            await Self.expectLastAnswer(over, within: Self.grace, status: 413, mentioning: "4096")
            // A chunked body within the limit, pipelined after another, is stored; so is the one after it.
            let fine = try Self.connect(server)
            let record = { (id: String) in "{\"id\":\"\(id)\"}" }
            let chunked = { (id: String) in
                Self.postChunked(
                    table, body: "\(String(record(id).utf8.count, radix: 16))\r\n\(record(id))\r\n0\r\n\r\n")
            }
            fine.sendNow(chunked("fine1") + Self.post(table, id: "fine2") + chunked("fine3"))
            for _ in 0..<3 { #expect(await fine.readAnswer(within: Self.grace)?.status == 201) }
            for id in ["huge", "over"] {
                let check = try Self.connect(server)
                await check.send(Self.get("/tables/\(table)/\(id)"))
                #expect(await check.readAnswer(within: 10)?.status == 404, "\(id) stored")
            }
        }
    }

    @Test(
        "a chunked body that stalls in any state of its framing is answered 408 after the body timeout",
        arguments: Backend.available)
    func stalledChunkedBody(backend: Backend) async throws {
        let table = uniqueTableName()
        let stalls = [
            ("in a chunk size", "a"),
            ("in a chunk extension", "a;name=va"),
            ("in a chunk's bytes", "a\r\n{\"id\":"),
            ("before a chunk's CRLF", "a\r\n{\"id\":\"s\"}"),
            ("before the trailers end", "a\r\n{\"id\":\"s\"}\r\n0\r\n"),
            ("in a trailer", "a\r\n{\"id\":\"s\"}\r\n0\r\nX-Trailer: a")
        ]
        try await withLiveServer(backend, tables: [table], configure: { $0.bodyTimeout = Self.bodyTimeout }) { server in
            let connections = try stalls.map { _ in try Self.connect(server) }
            for (connection, stall) in zip(connections, stalls) {
                connection.sendNow(Self.postChunked(table, body: stall.1))
            }
            for (connection, stall) in zip(connections, stalls) {
                let answer = await connection.readAnswer(within: Self.bodyTimeout / .seconds(1) + Self.grace)
                #expect(answer?.status == 408, "\(stall.0): \(answer?.text ?? "no answer")")
                #expect(await connection.waitForClose(within: Self.grace), "\(stall.0): left open")
            }
            let check = try Self.connect(server)
            await check.send(Self.get("/tables/\(table)/s"))
            #expect(await check.readAnswer(within: 10)?.status == 404)
        }
    }
}
