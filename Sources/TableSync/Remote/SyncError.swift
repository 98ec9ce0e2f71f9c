import SyncProtocol
import TableSyncStorage

/// A sync against the server failed; each case says what the person or script can do about it.
public enum SyncError: CategorizedError, Equatable {
    /// The server could not be reached, or kept failing or timing out, after the retries.
    case unreachable(url: String, reason: String)
    /// The server answered, but said after the retries that it cannot reach its database (503 with the code
    /// `databaseUnavailable`). Nothing was refused: the journal keeps every operation not applied.
    case databaseUnavailable(url: String)
    /// The server refused the credentials (401 or 403).
    case authenticationRefused(status: Int, message: String?)
    /// The server answered something the protocol does not allow.
    case malformedResponse(url: String, reason: String)
    /// No token could be had from where `tablesync.json` says (`source`: "the token file /etc/…", "the
    /// tokenCommand of tablesync.json").
    case tokenUnavailable(source: String, reason: String)
    /// The server refused the request itself, not a record: a table it does not serve, a query it does not
    /// take. Nothing was filed as a conflict.
    case requestRefused(url: String, status: Int, reason: String)
    /// The server's TLS certificate is not trusted (no authority this machine trusts signed it, or it names another
    /// host); `detail` is the TLS library's words. Not retried: it is a setting to change, not a failure that
    /// passes. Nothing was sent.
    case serverNotTrusted(url: String, detail: String)
    /// The server refuses the protocol version the store speaks and accepts the other one. `learnedForNextRun`:
    /// the store does not pin a version, and the next run speaks `accepted`.
    case protocolVersionRefused(url: String, refused: Int, accepted: Int, learnedForNextRun: Bool)

    /// Which kind of failure this is, for the command line's exit code.
    public var kind: FailureKind {
        switch self {
        // An answer the protocol does not allow (a proxy's page, a damaged body, a server out of step) is a failure
        // of the link to the server, as the retries see it: nothing was lost, and the next run tries again.
        case .unreachable, .malformedResponse, .databaseUnavailable: return .unreachable
        case .authenticationRefused, .tokenUnavailable: return .authentication
        case .requestRefused, .protocolVersionRefused, .serverNotTrusted: return .usage
        }
    }

    /// The error as one sentence that says what a person or script can do.
    public var description: String {
        switch self {
        case .unreachable(let url, let reason):
            return "the server at \(url) could not be reached (\(reason)); nothing was lost, try again later."
        case .databaseUnavailable(let url):
            return
                """
                the server at \(url) answered, but its database is unavailable; nothing was lost, try again later \
                (the server's operator can tell when its database is back).
                """
        case .authenticationRefused(let status, let message):
            return
                """
                the server refused the credentials (HTTP \(status)\(message.map { ": \($0)" } ?? "")); check the \
                token it was given (TABLESYNC_TOKEN, or tokenFile or tokenCommand in tablesync.json).
                """
        case .malformedResponse(let url, let reason):
            return "the server's answer to \(url) is not valid: \(reason); nothing was lost, try again later."
        case .serverNotTrusted(let url, let detail):
            return
                """
                the TLS certificate of the server at \(url) is not trusted (\(detail)). If a private authority signed \
                it, name that authority's file in SSL_CERT_FILE or CURL_CA_BUNDLE; nothing was sent.
                """
        case .tokenUnavailable(let source, let reason):
            return "no token could be had from \(source): \(reason)."
        case .requestRefused(let url, let status, let reason):
            return
                """
                the server refused the request \(url) itself, not a record (HTTP \
                \(status)\(reason.isEmpty ? "" : ": \(reason)")); nothing was filed as a conflict and the journal \
                keeps every operation not applied.
                """
        case .protocolVersionRefused(let url, let refused, let accepted, let learnedForNextRun):
            let refusedText = "ZUMO-API-VERSION \(TableClient.versionHeaderValue(refused))"
            let fix =
                learnedForNextRun
                ? "TableSync speaks \(TableClient.versionHeaderValue(accepted)) to it from the next run"
                : """
                set \"apiVersion\": \(accepted) in tablesync.json, or remove \"apiVersion\" to let TableSync learn \
                it
                """
            return
                """
                the server at \(url) refuses \(refusedText) and accepts \(TableClient.versionHeaderValue(accepted)); \
                \(fix). Nothing was filed as a conflict; the journal keeps every operation not applied.
                """
        }
    }
}
