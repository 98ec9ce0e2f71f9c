import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SyncProtocol

/// A request to the server, relative to its base URL.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    /// The path, already percent-encoded (`/tables/todo/a%20b`).
    public var path: String
    /// Query parameters, unencoded, in order.
    public var query: [(name: String, value: String)]
    public var headers: [String: String]
    public var body: [UInt8]?

    public init(method: String, path: String, query: [(name: String, value: String)] = [], headers: [String: String] = [:], body: [UInt8]? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.path == rhs.path && lhs.headers == rhs.headers && lhs.body == rhs.body
            && lhs.query.map { [$0.name, $0.value] } == rhs.query.map { [$0.name, $0.value] }
    }

    /// The path and query string, percent-encoded.
    public var pathAndQuery: String {
        guard !query.isEmpty else { return path }
        return path + "?" + query.map { Self.encode($0.name) + "=" + Self.encode($0.value) }.joined(separator: "&")
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters.
    static func encode(_ text: String) -> String {
        var output = ""
        let hex = Array("0123456789ABCDEF")
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "$"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                output.append("%")
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0xF)])
            }
        }
        return output
    }
}

/// A response from the server.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    /// Header values by lowercased name.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of header `name` (any case).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Sends requests to one server through Foundation's `URLSession` (libcurl on Linux), with a timeout on every
/// request and retries with backoff on connection failures, timeouts, 408, 429 and 5xx. Other statuses,
/// 4xx included, are returned to the caller at once: they are answers, not failures of the link.
public struct HTTPClient: Sendable {
    /// The server's base URL without a trailing slash.
    public let baseURL: String
    /// Headers sent with every request (protocol version, credentials).
    public let defaultHeaders: [String: String]
    /// Seconds before a request without an answer counts as failed.
    public let timeout: Double
    /// When to try again.
    public let retryPolicy: RetryPolicy
    private let session: URLSession

    public init(baseURL: String, defaultHeaders: [String: String], timeout: Double = 30, retryPolicy: RetryPolicy = RetryPolicy()) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.defaultHeaders = defaultHeaders
        self.timeout = timeout
        self.retryPolicy = retryPolicy
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 4
        configuration.httpMaximumConnectionsPerHost = 4
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        self.session = URLSession(configuration: configuration)
    }

    /// Sends `request`, retrying as the policy says. Throws ``SyncError/unreachable(url:reason:)`` when the
    /// attempts are used up.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let urlText = baseURL + request.pathAndQuery
        guard let url = URL(string: urlText) else {
            throw SyncError.malformedResponse(url: urlText, reason: "the URL is not valid")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        urlRequest.timeoutInterval = timeout
        for (name, value) in defaultHeaders { urlRequest.setValue(value, forHTTPHeaderField: name) }
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let body = request.body {
            urlRequest.httpBody = Data(body)
            if urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
                urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
        }
        var attempt = 0
        while true {
            attempt += 1
            let failure: String
            var retryAfter: Double?
            do {
                let (data, response) = try await session.data(for: urlRequest)
                guard let http = response as? HTTPURLResponse else {
                    throw SyncError.malformedResponse(url: urlText, reason: "not an HTTP response")
                }
                var headers: [String: String] = [:]
                for (name, value) in http.allHeaderFields {
                    if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
                }
                let result = HTTPResponse(status: http.statusCode, headers: headers, body: Array(data))
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
                failure = Self.describe(error)
            }
            guard let delay = retryPolicy.delay(afterAttempt: attempt, retryAfter: retryAfter, random: Double.random(in: 0..<1)) else {
                throw SyncError.unreachable(url: baseURL, reason: "\(failure) after \(attempt) attempt\(attempt == 1 ? "" : "s")")
            }
            try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
        }
    }

    /// `true` for a 2xx answer to a write that says it is JSON but does not parse.
    static func isDamagedWriteAnswer(_ response: HTTPResponse, method: String) -> Bool {
        guard method != "GET", (200...299).contains(response.status), !response.body.isEmpty,
              response.header("Content-Type")?.lowercased().contains("json") == true else { return false }
        return (try? JSONParser.parse(response.body)) == nil
    }

    private static func describe(_ error: Error) -> String {
        if let urlError = error as? URLError {
            switch urlError.code {
            case .timedOut: return "timed out"
            case .cannotConnectToHost: return "connection refused"
            case .networkConnectionLost: return "connection lost"
            case .cannotFindHost: return "unknown host"
            default: return urlError.localizedDescription
            }
        }
        return "\(error)"
    }
}
