/// The kinds of failure a caller (and the command line's exit code) tells apart.
public enum FailureKind: Sendable, Equatable {
    /// The request itself was wrong: bad arguments, unknown table, invalid JSON given on the command line.
    case usage
    /// The store has invalid files or state that needs a person.
    case invalidStore
    /// Another run holds the store's lock.
    case locked
    /// The server could not be reached or timed out; retrying later may work.
    case unreachable
    /// The server refused the credentials.
    case authentication
    /// Where git left the store stops the run before anything is sent (``GitStateRefused``).
    case gitState
    /// Anything else.
    case other
}

/// An error that knows which ``FailureKind`` it is.
public protocol CategorizedError: Error, CustomStringConvertible {
    /// Which kind of failure this is.
    var kind: FailureKind { get }
}

extension FileSystemError: CategorizedError {
    /// File system failures are ``FailureKind/other``.
    public var kind: FailureKind { .other }
}
