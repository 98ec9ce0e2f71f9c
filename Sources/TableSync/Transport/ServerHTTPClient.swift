import AsyncHTTPClient
import GzipCompression
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import SyncProtocol

/// Sends requests to one server, with a time limit on every request and retries with backoff on connection
/// failures, timeouts, 408, 429 and 5xx. Other statuses, 4xx included, are returned to the caller at once:
/// they are answers, not failures of the link.
///
/// Requests go through AsyncHTTPClient on SwiftNIO (HTTP/1.1 or HTTP/2, TLS, a pool of kept-alive
/// connections), not Foundation's `URLSession`: on Linux, `URLSession` over libcurl keeps a core busy while it
/// waits for an answer (thousands of wake-ups a second), which a cron job waiting on a slow server, or a pull
/// writing one page while the next downloads, cannot afford. Gzip answers are inflated here, so the bytes
/// that crossed the wire are known and a body beyond ``maxResponseBytes`` is refused before it fills memory.
struct ServerHTTPClient: Sendable {
    /// The server's base URL without a trailing slash.
    let baseURL: String
    /// Headers sent with every request (protocol version, credentials).
    let defaultHeaders: [String: String]
    /// Seconds a request may take, from connecting to the last byte of its answer, before it counts as failed.
    let timeout: Double
    /// When to try again.
    let retryPolicy: RetryPolicy
    /// The largest answer body accepted, after inflating: far beyond any page or batch answer the protocol
    /// makes, so only a broken or hostile server reaches it.
    let maxResponseBytes: Int

    /// The default of ``maxResponseBytes``: 256 MiB.
    static let defaultMaxResponseBytes = 256 << 20

    init(baseURL: String, defaultHeaders: [String: String], timeout: Double = 30, retryPolicy: RetryPolicy = RetryPolicy(),
                maxResponseBytes: Int = defaultMaxResponseBytes) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.defaultHeaders = defaultHeaders
        self.timeout = timeout
        self.retryPolicy = retryPolicy
        self.maxResponseBytes = maxResponseBytes
    }

    /// Sends `request`, retrying as the policy says. Throws ``SyncError/unreachable(url:reason:)`` when the
    /// attempts are used up.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let urlText = baseURL + request.pathAndQuery
        guard let target = ProxyEnvironment.Target(url: urlText) else {
            throw SyncError.malformedResponse(url: urlText, reason: "the URL is not valid")
        }
        let transport = HTTPTransport.client(proxy: ProxyEnvironment.proxy(for: target))
        var attempt = 0
        while true {
            attempt += 1
            let failure: String
            var retryAfter: Double?
            do {
                let result = try await exchange(request, url: urlText, transport: transport)
                if Self.isDamagedWriteAnswer(result, method: request.method) {
                    // The write was applied, but its answer was damaged on the way: send it again, and the
                    // lost-acknowledgement rule turns the server's 409/412 into success.
                    failure = "HTTP \(result.status) with a damaged JSON body"
                } else {
                    guard RetryPolicy.isRetryable(status: result.status) else { return result }
                    failure = "HTTP \(result.status)"
                }
                retryAfter = RetryPolicy.retryAfterSeconds(result.header("Retry-After"))
            } catch let error as SyncError {
                throw error
            } catch {
                // A cancelled task (AsyncHTTPClient then fails the request) is not a failure of the link to retry.
                if Task.isCancelled { throw CancellationError() }
                failure = Self.describe(error)
            }
            guard let delay = retryPolicy.delay(afterAttempt: attempt, retryAfter: retryAfter, random: Double.random(in: 0..<1)) else {
                throw SyncError.unreachable(url: baseURL, reason: "\(failure) after \(attempt) attempt\(attempt == 1 ? "" : "s")")
            }
            try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
        }
    }

    /// One attempt: the request on the wire, the whole answer read and inflated.
    private func exchange(_ request: HTTPRequest, url: String, transport: AsyncHTTPClient.HTTPClient) async throws -> HTTPResponse {
        var outgoing = HTTPClientRequest(url: url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in defaultHeaders { outgoing.headers.replaceOrAdd(name: name, value: value) }
        for (name, value) in request.headers { outgoing.headers.replaceOrAdd(name: name, value: value) }
        // Answers are inflated here, so every request accepts gzip (as URLSession and curl ask by default).
        if !outgoing.headers.contains(name: "Accept-Encoding") { outgoing.headers.add(name: "Accept-Encoding", value: "gzip") }
        if let body = request.body {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
            if !outgoing.headers.contains(name: "Content-Type") { outgoing.headers.add(name: "Content-Type", value: "application/json") }
        }
        let answer = try await transport.execute(outgoing, timeout: .nanoseconds(Int64(timeout * 1_000_000_000)))
        var headers: [String: String] = [:]
        for (name, value) in answer.headers {
            let key = name.lowercased()
            headers[key] = headers[key].map { $0 + ", " + value } ?? value
        }
        let collected: ByteBuffer
        do {
            collected = try await answer.body.collect(upTo: maxResponseBytes)
        } catch is NIOTooManyBytesError {
            throw SyncError.malformedResponse(url: url, reason: "the answer is larger than \(Self.sizeText(maxResponseBytes))")
        }
        let wire = Array(collected.readableBytesView)
        var body = wire
        if headers["content-encoding"]?.lowercased().contains("gzip") == true, !wire.isEmpty {
            do {
                body = try Gzip.decompress(wire, limit: maxResponseBytes)
            } catch .tooLarge {
                throw SyncError.malformedResponse(url: url, reason: "the answer inflates to more than \(Self.sizeText(maxResponseBytes))")
            } catch {
                // Damaged on the way: a failure of the link, worth another attempt.
                throw DamagedBody(reason: "a damaged gzip body (\(error))")
            }
            headers["content-encoding"] = nil
        }
        return HTTPResponse(status: Int(answer.status.code), headers: headers, body: body, wireBodySize: wire.count)
    }

    /// `256 MiB`, or `10000 bytes` for a limit that is not a whole number of MiB.
    static func sizeText(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }

    /// An answer whose body was damaged on the way.
    private struct DamagedBody: Error {
        let reason: String
    }

    /// `true` for a 2xx answer to a write that says it is JSON but does not parse.
    static func isDamagedWriteAnswer(_ response: HTTPResponse, method: String) -> Bool {
        guard method != "GET", (200...299).contains(response.status), !response.body.isEmpty,
              response.header("Content-Type")?.lowercased().contains("json") == true else { return false }
        return (try? JSONParser.parse(response.body)) == nil
    }

    /// A failed attempt in a few words, for the message that ends the retries.
    private static func describe(_ error: any Error) -> String {
        if let damaged = error as? DamagedBody { return damaged.reason }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout: return "timed out"
            case .remoteConnectionClosed: return "connection lost"
            default: return "\(error)"
            }
        }
        if let error = error as? NIOConnectionError {
            let refused = error.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
            if refused { return "connection refused" }
            if error.dnsAAAAError != nil || error.dnsAError != nil, error.connectionErrors.isEmpty { return "unknown host" }
            return "could not connect"
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return "connection refused"
            case ECONNRESET, EPIPE: return "connection lost"
            case ETIMEDOUT: return "timed out"
            default: return "\(error)"
            }
        }
        return "\(error)"
    }
}

/// The process's connection pools: one AsyncHTTPClient per proxy setting, created on first use and kept for
/// the life of the process (a command line run talks to one server; an app embedding the library reuses them).
enum HTTPTransport {
    private static let clients = NIOLockedValueBox<[ProxyEnvironment.Proxy?: AsyncHTTPClient.HTTPClient]>([:])

    static func client(proxy: ProxyEnvironment.Proxy?) -> AsyncHTTPClient.HTTPClient {
        clients.withLockedValue { clients in
            if let client = clients[proxy] { return client }
            var configuration = AsyncHTTPClient.HTTPClient.Configuration()
            // Gzip answers are inflated by ``ServerHTTPClient`` itself, with a limit and a count of wire bytes.
            configuration.decompression = .disabled
            // A refused connection fails the attempt at once; ``RetryPolicy`` decides about the next one.
            configuration.connectionPool.retryConnectionEstablishment = false
            if let proxy {
                configuration.proxy = .server(host: proxy.host, port: proxy.port,
                                              authorization: proxy.user.map { .basic(username: $0, password: proxy.password ?? "") })
            }
            let client = AsyncHTTPClient.HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            clients[proxy] = client
            return client
        }
    }
}
