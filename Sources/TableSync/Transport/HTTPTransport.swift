/// What carries one attempt of a request to the server and brings back its answer: libcurl on Linux
/// (``CurlTransport``), `URLSession` on Apple platforms. Everything above one attempt — retries, the damaged-answer
/// rule, inflating gzip within a limit, counting wire bytes — is ``ServerHTTPClient``'s, the same on every platform.
package protocol HTTPTransport: Sendable {
    /// Sends `request` once and returns the whole answer, or throws ``TransportFailure`` when the link failed
    /// (or `CancellationError` when the task was cancelled).
    func exchange(_ request: TransportRequest) async throws -> TransportAnswer
}

/// One attempt of a request, as a transport sends it.
package struct TransportRequest: Sendable {
    package var method: String
    /// The absolute URL, percent-encoded.
    package var url: String
    /// Header lines in the order they are sent.
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]?
    /// Seconds from the start of the attempt (connecting included) to the last byte of the answer.
    package var timeout: Double
    /// The most body bytes taken from the wire; a longer body fails the attempt with ``TransportFailure/tooLarge``.
    package var maxBodyBytes: Int

    package init(
        method: String, url: String, headers: [(name: String, value: String)], body: [UInt8]?, timeout: Double,
        maxBodyBytes: Int
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxBodyBytes = maxBodyBytes
    }
}

/// The answer to one attempt.
package struct TransportAnswer: Sendable {
    package var status: Int
    /// Header values by lowercased name; a repeated header's values joined with `, `.
    package var headers: [String: String]
    /// The body as it crossed the wire: still compressed when `content-encoding` says so, unless
    /// `bodyIsDecoded`.
    package var body: [UInt8]
    /// Whether the transport itself already inflated the body (`URLSession` always does); `wireBodySize`
    /// is then what the answer said it sent.
    package var bodyIsDecoded: Bool
    /// Body bytes that crossed the wire.
    package var wireBodySize: Int

    package init(
        status: Int, headers: [String: String], body: [UInt8], bodyIsDecoded: Bool = false, wireBodySize: Int? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.bodyIsDecoded = bodyIsDecoded
        self.wireBodySize = wireBodySize ?? body.count
    }
}

/// Why an attempt failed before a whole answer arrived.
package enum TransportFailure: Error, Equatable, Sendable {
    case timedOut
    case connectionRefused
    /// The connection broke after it was made: reset, closed early, or an answer cut short.
    case connectionLost
    case unknownHost
    /// Any other failure to reach the server, in the transport's words.
    case couldNotConnect(String)
    /// The server's TLS certificate is not trusted or does not name the host: no later attempt can succeed, so
    /// ``ServerHTTPClient`` does not retry it (``SyncError/serverNotTrusted(url:detail:)``).
    case untrustedCertificate(String)
    /// The answer's body is longer than ``TransportRequest/maxBodyBytes``: not retried.
    case tooLarge

    /// The failure in a few words, for the message that ends the retries (``untrustedCertificate`` and
    /// ``tooLarge`` end them at once, with errors of their own).
    package var reason: String {
        switch self {
        case .timedOut: return "timed out"
        case .connectionRefused: return "connection refused"
        case .connectionLost: return "connection lost"
        case .unknownHost: return "unknown host"
        case .couldNotConnect(let detail), .untrustedCertificate(let detail): return detail
        case .tooLarge: return "the answer is too large"
        }
    }
}

/// The transport of this platform, shared by every client of the process so that connections are reused.
package enum PlatformTransport {
    package static var shared: any HTTPTransport {
        #if canImport(Darwin)
        URLSessionTransport.shared
        #else
        CurlTransport.shared
        #endif
    }
}
