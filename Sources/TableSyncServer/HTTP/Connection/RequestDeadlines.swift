import NIOCore

/// When a connection has waited too long for its client, as a pure rule of what has arrived and what was answered:
/// a request's line and headers are due within the header timeout of their first byte, its body within the body
/// timeout of its headers, and the next request within the idle timeout of the last answer. While the server
/// works on a request, the client owes nothing and no deadline runs.
struct RequestDeadlines: Sendable, Equatable {
    /// What a missed deadline ends.
    enum Kind: Sendable, Equatable {
        /// A request's line and headers arrived too slowly: 408, then the connection is closed.
        case header
        /// A request's body arrived too slowly: 408, then the connection is closed.
        case body
        /// No request came on a kept-alive connection: it is closed without an answer.
        case idle
    }

    /// A deadline: when, and what it ends.
    struct Deadline: Sendable, Equatable {
        let at: NIODeadline
        let kind: Kind
    }

    /// Where the reading of requests stands.
    private enum Reading: Sendable, Equatable {
        /// Between requests, since the end of the last one read (or the connection's start).
        case waiting(since: NIODeadline)
        /// Bytes of a request head have arrived; the head is not complete.
        case head(since: NIODeadline)
        /// The head is complete; its body is not.
        case body(since: NIODeadline)
    }

    let headerTimeout: TimeAmount
    let bodyTimeout: TimeAmount
    let idleTimeout: TimeAmount
    private var reading: Reading
    /// Requests whose head has arrived and whose answer has not been written to its end.
    private(set) var unanswered = 0

    init(headerTimeout: TimeAmount, bodyTimeout: TimeAmount, idleTimeout: TimeAmount, openedAt now: NIODeadline) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
        reading = .waiting(since: now)
    }

    /// Bytes arrived from the client.
    mutating func bytesArrived(at now: NIODeadline) {
        if case .waiting = reading { reading = .head(since: now) }
    }

    /// A request's head is complete.
    mutating func headReceived(at now: NIODeadline) {
        reading = .body(since: now)
        unanswered += 1
    }

    /// A request has been read to its end.
    mutating func requestEnded(at now: NIODeadline) {
        reading = .waiting(since: now)
    }

    /// An answer has been written to its end.
    mutating func answerEnded(at now: NIODeadline) {
        unanswered = max(0, unanswered - 1)
        if unanswered == 0, case .waiting = reading { reading = .waiting(since: now) }
    }

    /// `true` between a request's head and the end of its body: an error in the bytes read now is in a body whose
    /// request has been passed on.
    var isReadingBody: Bool {
        if case .body = reading { return true }
        return false
    }

    /// The deadline in force, or `nil` while the server owes every answer and no request is being read.
    var deadline: Deadline? {
        switch reading {
        case .head(let since): return Deadline(at: since + headerTimeout, kind: .header)
        case .body(let since): return Deadline(at: since + bodyTimeout, kind: .body)
        case .waiting(let since): return unanswered == 0 ? Deadline(at: since + idleTimeout, kind: .idle) : nil
        }
    }
}
