/// A fault that a ``LoopbackProxy`` in fault mode injects into one HTTP exchange.
///
/// A mock in the sense that it stands between two real parts: a real server cannot be made to reset a connection
/// after it committed, lose an answer, or serve a page twice on demand, so the faults are made here, on the wire.
public enum NetworkFault: Sendable, Equatable, CustomStringConvertible {
    /// Forward faithfully.
    case none
    /// Read the request's head, then reset: the request dies half-sent and the server never sees it.
    case resetMidRequest
    /// Forward; the server commits; send half of the answer, then reset.
    case resetMidResponse
    /// Forward; send the head and half of the body with the full `Content-Length`, then close.
    case truncatedResponse
    /// Forward; damage the body's bytes (a gzip body no longer inflates, a JSON body no longer parses).
    case corruptResponse
    /// Answer this status without forwarding (a gateway or a throttled server); 429/503 with `Retry-After`.
    case status(Int)
    /// Forward (the server commits), then answer this status instead: the acknowledgement is lost.
    case statusAfterCommit(Int)
    /// Forward (the server commits), then hold the answer this many seconds, past the client's timeout.
    case delayAfterCommit(seconds: Double)
    /// For a list request: forward, then answer with the previous page of the same table again.
    case replayPreviousPage
    /// Answer `200 text/html` with a login page without forwarding, as a captive portal or a proxy does.
    case portalPage

    public var description: String {
        switch self {
        case .none: return "none"
        case .resetMidRequest: return "reset mid-request"
        case .resetMidResponse: return "reset mid-response"
        case .truncatedResponse: return "truncated response"
        case .corruptResponse: return "corrupt response"
        case .status(let code): return "\(code)"
        case .statusAfterCommit(let code): return "\(code) after commit"
        case .delayAfterCommit(let seconds): return "delayed \(seconds)s after commit"
        case .replayPreviousPage: return "previous page replayed"
        case .portalPage: return "a captive portal's page"
        }
    }

    /// Whether the server may have applied the request before the client saw the fault.
    public var afterCommit: Bool {
        switch self {
        case .resetMidResponse, .truncatedResponse, .corruptResponse, .statusAfterCommit, .delayAfterCommit,
            .replayPreviousPage:
            return true
        default: return false
        }
    }
}

/// One request that went through the proxy, and what was done to it.
public struct ProxiedExchange: Sendable, CustomStringConvertible {
    public var method: String
    /// Path and query as sent.
    public var target: String
    public var fault: NetworkFault
    public var description: String { "\(method) \(target) → \(fault)" }
}
