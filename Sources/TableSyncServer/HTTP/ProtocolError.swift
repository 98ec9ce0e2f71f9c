import HTTPTypes
import SyncProtocol

/// A request the table protocol refuses, with the status and body to answer.
///
/// Every refusal is a 4xx with a JSON body: `{"error": "..."}` naming what was wrong, or, for conflicts
/// (409, 412), the server's copy of the record with its `ETag`. Routes and middleware throw it; it renders
/// itself (`HTTPResponseError`, in `ProtocolError+Answer.swift`), and ``ProtocolResponseMiddleware`` renders every
/// table response's error through ``ResponseWriter`` so that large bodies are compressed like any other answer.
/// This file needs no HTTP server, so that the fuzzer (scripts/fuzz.sh) builds the request checks with it.
package struct ProtocolError: Error, Sendable, CustomStringConvertible {
    package var status: HTTPResponse.Status
    package var message: String
    /// The server's copy of the record, sent instead of the error body (409, 412).
    package var record: StoredRecord?
    /// Seconds the client should wait before it tries again (`Retry-After`), for a refusal that passes by itself.
    package var retryAfterSeconds: Int?
    /// The methods the path is served with (`Allow`), for a 405.
    package var allowedMethods: [HTTPRequest.Method]?
    /// The kind of refusal a client acts on, sent as the body's `"code"`.
    package var code: ProtocolErrorCode?

    package init(
        status: HTTPResponse.Status, message: String, record: StoredRecord? = nil, retryAfterSeconds: Int? = nil,
        allowedMethods: [HTTPRequest.Method]? = nil, code: ProtocolErrorCode? = nil
    ) {
        self.status = status
        self.message = message
        self.record = record
        self.retryAfterSeconds = retryAfterSeconds
        self.allowedMethods = allowedMethods
        self.code = code
    }

    package var description: String { "\(status.code) \(message)" }

    static func badRequest(_ message: String) -> ProtocolError { ProtocolError(status: .badRequest, message: message) }
    static func notFound(_ message: String) -> ProtocolError { ProtocolError(status: .notFound, message: message) }

    /// A soft-deleted record: 404 in v2, 410 in v3.
    static func deleted(_ id: String, version: ProtocolVersion) -> ProtocolError {
        ProtocolError(status: version == .v2 ? .notFound : .gone, message: "the record '\(id)' has been deleted")
    }

    static func conflict(_ message: String, record: StoredRecord) -> ProtocolError {
        ProtocolError(status: .conflict, message: message, record: record)
    }

    static func preconditionFailed(_ message: String, record: StoredRecord) -> ProtocolError {
        ProtocolError(status: .preconditionFailed, message: message, record: record)
    }

    static func payloadTooLarge(limit: Int) -> ProtocolError {
        ProtocolError(
            status: .contentTooLarge, message: "the request body is larger than this server's limit of \(limit) bytes")
    }

    static let unauthorized = ProtocolError(
        status: .unauthorized,
        message: "a valid token is required: send Authorization: Bearer <token> or X-ZUMO-AUTH: <token>")

    /// A route ran without what its middleware provides: a fault of the server, not of the request.
    static func missingContext(_ what: String) -> ProtocolError {
        ProtocolError(
            status: .internalServerError,
            message: "the request reached its route without its \(what); see the server's log")
    }

    /// The JSON body of the response.
    var body: JSONValue { record?.json() ?? ProtocolErrorBody.make(message, code: code) }
}
