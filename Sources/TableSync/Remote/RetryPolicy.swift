/// When to try a request again, and after how long: exponential backoff with full jitter, honouring the
/// server's `Retry-After`. A pure value, so the schedule can be tested without a network.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first one included.
    public var maximumAttempts: Int
    /// The delay before the second attempt, in seconds; it doubles for each further attempt.
    public var baseDelay: Double
    /// No delay is longer than this, in seconds (a server's `Retry-After` included).
    public var maximumDelay: Double

    /// A policy of `maximumAttempts` attempts with delays from `baseDelay`, doubling, up to `maximumDelay` seconds.
    public init(maximumAttempts: Int = 5, baseDelay: Double = 0.5, maximumDelay: Double = 30) {
        self.maximumAttempts = maximumAttempts
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
    }

    /// No retries at all.
    package static let none = RetryPolicy(maximumAttempts: 1)

    /// Whether a response with `status` is worth another attempt: 408, 429 and 5xx (but not 501).
    package static func isRetryable(status: Int) -> Bool {
        status == 408 || status == 429 || (status >= 500 && status != 501)
    }

    /// The delay before attempt `attempt + 1` after attempt `attempt` (1-based) failed, or `nil` when no
    /// attempts are left. `retryAfter` is the server's `Retry-After` in seconds; `random` is in `0..<1`.
    package func delay(afterAttempt attempt: Int, retryAfter: Double?, random: Double) -> Double? {
        guard attempt < maximumAttempts else { return nil }
        if let retryAfter { return min(max(retryAfter, 0), maximumDelay) }
        let ceiling = min(maximumDelay, baseDelay * Double(1 << min(attempt - 1, 30)))
        return ceiling * random
    }

    /// Seconds from a `Retry-After` header value given in seconds (HTTP dates are not used by table servers
    /// and are ignored).
    package static func retryAfterSeconds(_ value: String?) -> Double? {
        guard let value, let seconds = Double(value.trimmingWhitespace()), seconds.isFinite, seconds >= 0 else {
            return nil
        }
        return seconds
    }
}
