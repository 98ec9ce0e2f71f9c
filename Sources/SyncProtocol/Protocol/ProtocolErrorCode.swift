/// A refusal a client acts on by kind rather than by its message: the `"code"` member of an error body
/// (``ProtocolErrorBody``), beside the `"error"` text a person reads.
///
/// ```json
/// {"error": "the database PostgreSQL at postgres://sync@db:5432/sync is unavailable; retry later",
///  "code": "databaseUnavailable"}
/// ```
public enum ProtocolErrorCode: String, Sendable, CaseIterable {
    /// The server answered, but it cannot reach its database for now (503 with `Retry-After`): retrying the same
    /// server later works, and nothing the request carried was refused.
    case databaseUnavailable
}
