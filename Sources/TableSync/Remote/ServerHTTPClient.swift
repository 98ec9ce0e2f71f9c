import GzipCompression
import Logging
import SyncProtocol

/// Sends requests to one server, with a time limit on every request and retries with backoff on connection
/// failures, timeouts, 408, 429 and 5xx. Other statuses, 4xx included, are returned to the caller at once:
/// they are answers, not failures of the link.
///
/// One attempt is the ``HTTPTransport``'s (libcurl on Linux, `URLSession` on Apple platforms); the rules around
/// it are the same everywhere: gzip answers are inflated here, so the bytes that crossed the wire are known and a
/// body beyond ``maxResponseBytes`` is refused before it fills memory.
struct ServerHTTPClient: Sendable {
    /// The server's base URL without a trailing slash.
    let baseURL: String
    /// Headers sent with every request (the protocol version).
    let defaultHeaders: [String: String]
    /// The client's token, sent as `Authorization: Bearer` and `X-ZUMO-AUTH`, and read again once when the server
    /// refuses it (401).
    let credentials: ClientCredentials?
    /// Seconds a request may take, from connecting to the last byte of its answer, before it counts as failed.
    let timeout: Double
    /// When to try again.
    let retryPolicy: RetryPolicy
    /// The largest answer body accepted, after inflating: far beyond any page or batch answer the protocol
    /// makes, so only a broken or hostile server reaches it.
    let maxResponseBytes: Int
    /// What carries each attempt.
    let transport: any HTTPTransport
    /// Where each attempt is logged, at debug level.
    let logger: Logger

    /// The default of ``maxResponseBytes``: 256 MiB.
    static let defaultMaxResponseBytes = 256 << 20

    init(
        baseURL: String, defaultHeaders: [String: String], credentials: ClientCredentials? = nil, timeout: Double = 30,
        retryPolicy: RetryPolicy = RetryPolicy(), maxResponseBytes: Int = defaultMaxResponseBytes,
        transport: any HTTPTransport = PlatformTransport.shared, logger: Logger = SyncOptions.silentLogger
    ) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.defaultHeaders = defaultHeaders
        self.credentials = credentials
        self.timeout = timeout
        self.retryPolicy = retryPolicy
        self.maxResponseBytes = maxResponseBytes
        self.transport = transport
        self.logger = logger
    }

    /// Sends `request`, retrying as the policy says. Throws ``SyncError/unreachable(url:reason:)`` when the
    /// attempts are used up, ``SyncError/databaseUnavailable(url:)`` when the last answer said the server's database
    /// is unavailable; with `returningServerFaults`, an answer of 500 or above to the last attempt is returned
    /// instead (the server was reached, and the caller tells its own fault from the server's: a write that fails
    /// there every time must not hold back the others).
    func send(_ request: HTTPRequest, returningServerFaults: Bool = false) async throws -> HTTPResponse {
        let urlText = baseURL + request.pathAndQuery
        var attempt = 0
        var token = try await credentials?.token()
        var renewed = false
        while true {
            attempt += 1
            let failure: FailedAttempt
            let started = ContinuousClock.now
            do {
                let result = try await exchange(request, url: urlText, token: token)
                logAttempt(
                    request, attempt: attempt, started: started, outcome: "HTTP \(result.status)",
                    bytes: result.wireBodySize)
                // A token refused once is read again (it may have expired meanwhile), and the request sent again
                // with the new one, without counting as an attempt.
                if result.status == 401, !renewed, let fresh = try await credentials?.renewed(after: token) {
                    token = fresh
                    renewed = true
                    attempt -= 1
                    continue
                }
                guard let judged = Self.failure(of: result, method: request.method) else { return result }
                failure = judged
            } catch TransportFailure.tooLarge {
                throw SyncError.malformedResponse(
                    url: urlText, reason: "the answer is larger than \(Self.sizeText(maxResponseBytes))")
            } catch TransportFailure.untrustedCertificate(let detail) {
                throw SyncError.serverNotTrusted(url: baseURL, detail: detail)
            } catch let error as TransportFailure {
                failure = FailedAttempt(reason: error.reason)
                logAttempt(request, attempt: attempt, started: started, outcome: failure.reason)
            } catch let error as DamagedBody {
                failure = FailedAttempt(reason: error.reason)
                logAttempt(request, attempt: attempt, started: started, outcome: failure.reason)
            }
            guard
                let delay = retryPolicy.delay(
                    afterAttempt: attempt, retryAfter: failure.retryAfter, random: Double.random(in: 0..<1))
            else {
                if returningServerFaults, !failure.databaseAway, let serverFault = failure.serverFault {
                    return serverFault
                }
                throw failure.error(afterAttempts: attempt, url: urlText, baseURL: baseURL)
            }
            try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
        }
    }

    /// What failed in the answer `result` to a request of `method`, to try again; `nil` when it is the answer to
    /// hand back.
    private static func failure(of result: HTTPResponse, method: String) -> FailedAttempt? {
        var failure: FailedAttempt
        if let damage = damageOfWriteAnswer(result, method: method) {
            // The write may have been applied, but its answer was damaged on the way or replaced by a proxy's page:
            // send it again, and the lost-acknowledgement rule turns the server's 409/412 into success.
            failure = FailedAttempt(reason: "HTTP \(result.status) with \(damage)", damagedAnswer: true)
        } else {
            guard RetryPolicy.isRetryable(status: result.status) else { return nil }
            failure = FailedAttempt(
                reason: "HTTP \(result.status)", serverFault: result.status >= 500 ? result : nil,
                databaseAway: saysDatabaseUnavailable(result))
        }
        failure.retryAfter = RetryPolicy.retryAfterSeconds(result.header("Retry-After"))
        return failure
    }

    /// Logs one attempt at debug level: the request's method and path (never its headers, which carry the token),
    /// what came of it, the answer's bytes on the wire and the time it took.
    private func logAttempt(
        _ request: HTTPRequest, attempt: Int, started: ContinuousClock.Instant, outcome: String,
        bytes: Int? = nil
    ) {
        let elapsed = ContinuousClock.now - started
        logger.debug(
            "request",
            metadata: [
                "method": .string(request.method),
                "path": .string(request.pathAndQuery),
                "outcome": .string(outcome),
                "bytes": .string(bytes.map(String.init) ?? "-"),
                "ms": .stringConvertible(Int64((elapsed / .milliseconds(1)).rounded(.down))),
                "attempt": .stringConvertible(attempt)
            ])
    }

    /// One attempt: the request on the wire, the whole answer read and inflated.
    private func exchange(_ request: HTTPRequest, url: String, token: String?) async throws -> HTTPResponse {
        // By lowercased name: a request's own header replaces a default one however either is spelt.
        var headers: [String: (name: String, value: String)] = [:]
        for (name, value) in defaultHeaders { headers[name.lowercased()] = (name, value) }
        if let token {
            headers["authorization"] = ("Authorization", "Bearer " + token)
            headers["x-zumo-auth"] = ("X-ZUMO-AUTH", token)
        }
        for (name, value) in request.headers { headers[name.lowercased()] = (name, value) }
        // Answers are inflated here, so every request accepts gzip (as URLSession and curl ask by default).
        if headers["accept-encoding"] == nil { headers["accept-encoding"] = ("Accept-Encoding", "gzip") }
        if request.body != nil, headers["content-type"] == nil {
            headers["content-type"] = ("Content-Type", "application/json")
        }
        let answer = try await transport.exchange(
            TransportRequest(
                method: request.method, url: url, headers: headers.sorted { $0.key < $1.key }.map(\.value),
                body: request.body, timeout: timeout, maxBodyBytes: maxResponseBytes))
        var answerHeaders = answer.headers
        var body = answer.body
        if answerHeaders["content-encoding"]?.lowercased().contains("gzip") == true {
            if !answer.bodyIsDecoded, !body.isEmpty {
                do {
                    body = try Gzip.decompress(answer.body, limit: maxResponseBytes)
                } catch .tooLarge {
                    throw SyncError.malformedResponse(
                        url: url, reason: "the answer inflates to more than \(Self.sizeText(maxResponseBytes))")
                } catch {
                    // Damaged on the way: a failure of the link, worth another attempt.
                    throw DamagedBody(reason: "a damaged gzip body (\(error))")
                }
            }
            answerHeaders["content-encoding"] = nil
        }
        return HTTPResponse(
            status: answer.status, headers: answerHeaders, body: body, wireBodySize: answer.wireBodySize)
    }

    /// Whether `response` is a 503 whose body says the server cannot reach its database
    /// (``ProtocolErrorCode/databaseUnavailable``).
    static func saysDatabaseUnavailable(_ response: HTTPResponse) -> Bool {
        guard response.status == 503, let body = try? JSONParser.parse(response.body) else { return false }
        return ProtocolErrorBody.code(in: body) == .databaseUnavailable
    }

    /// `256 MiB`, or `10000 bytes` for a limit that is not a whole number of MiB.
    static func sizeText(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }

    /// An answer whose body was damaged on the way.
    private struct DamagedBody: Error {
        let reason: String
    }

    /// What is wrong with a 2xx answer to a write that has a body but is no JSON (it says it is another type,
    /// as a captive portal's or proxy's HTML page does, or it does not parse); `nil` for any other answer.
    static func damageOfWriteAnswer(_ response: HTTPResponse, method: String) -> String? {
        guard method != "GET", (200...299).contains(response.status), !response.body.isEmpty else { return nil }
        let type = response.header("Content-Type")?.lowercased()
        if let type, !type.contains("json") { return "a body of type \(type), not JSON" }
        return (try? JSONParser.parse(response.body)) == nil ? "a damaged JSON body" : nil
    }
}

/// Why an attempt at a request failed, and what giving up after it throws.
private struct FailedAttempt {
    var reason: String
    /// The server's `Retry-After`, in seconds.
    var retryAfter: Double?
    /// A 5xx answer, handed back to a caller that asks for the server's faults.
    var serverFault: HTTPResponse?
    /// The answer to a write came damaged: the write may have been applied.
    var damagedAnswer = false
    /// The server said its database is unavailable.
    var databaseAway = false

    init(
        reason: String, serverFault: HTTPResponse? = nil, damagedAnswer: Bool = false, databaseAway: Bool = false
    ) {
        self.reason = reason
        self.serverFault = serverFault
        self.damagedAnswer = damagedAnswer
        self.databaseAway = databaseAway
    }

    /// What giving up after `attempts` throws. A database away is no fault of any one request: the whole run
    /// stops, and a write keeps its operation.
    func error(afterAttempts attempts: Int, url: String, baseURL: String) -> SyncError {
        if databaseAway { return .databaseUnavailable(url: baseURL) }
        let tally = "\(reason) after \(attempts) attempt\(attempts == 1 ? "" : "s")"
        return damagedAnswer ? .malformedResponse(url: url, reason: tally) : .unreachable(url: baseURL, reason: tally)
    }
}
