import SyncProtocol

/// A sync against the server failed; each case says what the person or script can do about it.
public enum SyncError: CategorizedError, Equatable {
    /// The server could not be reached, or kept failing or timing out, after the retries.
    case unreachable(url: String, reason: String)
    /// The server refused the credentials (401 or 403).
    case authenticationRefused(status: Int, message: String?)
    /// The server answered something the protocol does not allow.
    case malformedResponse(url: String, reason: String)
    /// The token file named in `tablesync.json` could not be read.
    case tokenUnavailable(path: String, reason: String)

    public var kind: FailureKind {
        switch self {
        case .unreachable: return .unreachable
        case .authenticationRefused, .tokenUnavailable: return .authentication
        case .malformedResponse: return .other
        }
    }

    public var description: String {
        switch self {
        case .unreachable(let url, let reason):
            return "the server at \(url) could not be reached (\(reason)); nothing was lost, try again later."
        case .authenticationRefused(let status, let message):
            return "the server refused the credentials (HTTP \(status)\(message.map { ": \($0)" } ?? "")); set TABLESYNC_TOKEN or the token file."
        case .malformedResponse(let url, let reason):
            return "the server's answer to \(url) is not valid: \(reason)."
        case .tokenUnavailable(let path, let reason):
            return "cannot read the token file \(path): \(reason)."
        }
    }
}
