import SyncProtocol

/// What the server's answer to one pushed operation means. A pure classification, tested cell by cell.
enum PushOutcome: Equatable {
    /// The server applied the operation; its copy of the record (`nil` after a delete).
    case applied([String: JSONValue]?)
    /// The server refused because its copy changed (409, 412, or the record is gone); its copy, if it sent one.
    case conflict(status: Int, server: [String: JSONValue]?)
    /// The server refused the operation for another reason; recorded like a conflict, the push goes on.
    case rejected(status: Int, message: String)
    /// The credentials were refused: the push stops.
    case authenticationRefused(status: Int, message: String?)

    /// Classifies `response` to an operation of `kind` that sent `sent` (the record's content, `nil` for a
    /// delete): ``classify(kind:sent:status:body:fallbackMessage:notFoundStatuses:)`` on its parsed body.
    static func classify(kind: PendingOperation.Kind, sent: [String: JSONValue]?, response: HTTPResponse,
                         notFoundStatuses: Set<Int> = [404, 410]) -> PushOutcome {
        classify(kind: kind, sent: sent, status: response.status, body: try? JSONParser.parse(response.body),
                 fallbackMessage: String(decoding: response.body.prefix(200), as: UTF8.self), notFoundStatuses: notFoundStatuses)
    }

    /// Classifies the answer `status` with `body` (its JSON, if any) to an operation of `kind` that sent `sent`.
    /// A single request's response and a batch result go through here alike. A 409 or 412 whose server copy
    /// says what was sent is a lost acknowledgement: the operation was applied by an earlier attempt, so it
    /// counts as applied. So does a delete of a record that is gone. `fallbackMessage` explains a refusal whose
    /// body has no `error` message.
    static func classify(kind: PendingOperation.Kind, sent: [String: JSONValue]?, status: Int, body: JSONValue?,
                         fallbackMessage: String = "", notFoundStatuses: Set<Int> = [404, 410]) -> PushOutcome {
        let serverItem = body.flatMap { try? ServerRecord.check($0, requireUpdatedAt: false) }
        let message = body.flatMap { $0["error"]?.stringValue } ?? fallbackMessage
        switch status {
        case 200...299:
            if kind == .delete { return .applied(serverItem) }
            guard let serverItem else {
                return .rejected(status: status, message: "the server's answer holds no valid record")
            }
            return .applied(serverItem)
        case 401, 403:
            return .authenticationRefused(status: status, message: body.flatMap { $0["error"]?.stringValue })
        case 409, 412:
            if let serverItem, sayTheSame(kind: kind, sent: sent, server: serverItem) { return .applied(serverItem) }
            if kind == .delete, let serverItem, ServerRecord.isDeleted(serverItem) { return .applied(serverItem) }
            return .conflict(status: status, server: serverItem)
        case _ where notFoundStatuses.contains(status):
            if kind == .delete { return .applied(nil) }
            return .conflict(status: status, server: nil)
        default:
            return .rejected(status: status, message: message)
        }
    }

    /// `true` when the server's copy already holds what the operation sent.
    static func sayTheSame(kind: PendingOperation.Kind, sent: [String: JSONValue]?, server: [String: JSONValue]) -> Bool {
        guard kind != .delete, let sent, !ServerRecord.isDeleted(server) else { return false }
        return ServerRecord.content(server) == ServerRecord.content(sent)
    }
}
