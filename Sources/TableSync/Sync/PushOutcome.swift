import SyncProtocol
import TableSyncStorage

/// What the server's answer to one pushed operation means. A pure classification, tested cell by cell.
enum PushOutcome: Equatable {
    /// The server applied the operation; its copy of the record (`nil` after a delete).
    case applied(ServerRecord?)
    /// The server refused because its copy changed (409, 412, or the record is gone); its copy, if it sent one.
    case conflict(status: Int, server: ServerRecord?)
    /// The server refused with 409 or 412 but its body is not its copy of the record (it lacks the server's
    /// `version` and `updatedAt`: azure-mobile-apps-node answers a duplicate insert with the item it was sent).
    /// The record must be read (``classify(kind:sent:refusedWith:serverCopy:)``) before anything is decided.
    case serverCopyNeeded(status: Int)
    /// The server refused the operation for another reason; recorded like a conflict, the push goes on.
    case rejected(status: Int, message: String)
    /// The server failed on the operation (500 or above) after the retries, or refused its batch as a whole: the
    /// push sends it again alone, and sets it aside when the server, reachable, keeps failing on it.
    case serverFault(status: Int, message: String)
    /// The credentials were refused (401): the push stops.
    case authenticationRefused(status: Int, message: String?)
    /// The server answered 2xx with something that is not its copy of the record (a proxy's or captive portal's
    /// page, an empty object): the answer, not the operation, is at fault. The push stops with the operation still
    /// pending, as when the server cannot be reached, and the next run sends it again (an insert or update that
    /// did reach the server comes back as a lost acknowledgement).
    case damagedAnswer(status: Int, reason: String)

    /// How many of `outcomes` are of each kind, in words for a log line: `"498 applied, 2 conflicts"`.
    static func tally(_ outcomes: [PushOutcome]) -> String {
        var counts: [String: Int] = [:]
        for outcome in outcomes {
            let kind =
                switch outcome {
                case .applied: "applied"
                case .conflict, .serverCopyNeeded: "conflicts"
                case .rejected: "rejected"
                case .serverFault: "server faults"
                case .authenticationRefused: "refused credentials"
                case .damagedAnswer: "damaged answers"
                }
            counts[kind, default: 0] += 1
        }
        return counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }

    /// Classifies `response` to an operation of `kind` that sent `sent` (the record's content, `nil` for a
    /// delete): ``classify(kind:sent:status:body:fallbackMessage:notFoundStatuses:)`` on its parsed body.
    static func classify(
        kind: PendingOperation.Kind, sent: [String: JSONValue]?, response: HTTPResponse,
        notFoundStatuses: Set<Int> = [404, 410]
    ) -> PushOutcome {
        classify(
            kind: kind, sent: sent, status: response.status, body: try? JSONParser.parse(response.body),
            fallbackMessage: String(decoding: response.body.prefix(200), as: UTF8.self),
            notFoundStatuses: notFoundStatuses)
    }

    /// Classifies the answer `status` with `body` (its JSON, if any) to an operation of `kind` that sent `sent`.
    /// A single request's response and a batch result go through here alike. A 409 or 412 whose server copy
    /// says what was sent is a lost acknowledgement: the operation was applied by an earlier attempt, so it
    /// counts as applied. So does a delete of a record that is gone. A 409 or 412 body counts as the server's
    /// copy only when it carries the server's system properties; otherwise the record must be read first
    /// (``serverCopyNeeded(status:)``). A 403 refuses this operation, not the credentials (they were good enough
    /// to be told so): it is set aside with the server's reason, as a 400 is, and the push goes on. A 2xx that
    /// holds no record is a damaged answer. `fallbackMessage` explains a refusal whose body has no `error` message.
    static func classify(
        kind: PendingOperation.Kind, sent: [String: JSONValue]?, status: Int, body: JSONValue?,
        fallbackMessage: String = "", notFoundStatuses: Set<Int> = [404, 410]
    ) -> PushOutcome {
        let serverItem = body.flatMap { try? ServerRecord(validating: $0, requireUpdatedAt: false) }
        let message = ServerText.oneLine(body.flatMap { $0["error"]?.stringValue } ?? fallbackMessage)
        switch status {
        case 200...299:
            if kind == .delete { return .applied(serverItem) }
            guard let serverItem else {
                return .damagedAnswer(status: status, reason: "the answer holds no valid record")
            }
            return .applied(serverItem)
        case 401:
            return .authenticationRefused(
                status: status, message: body.flatMap { $0["error"]?.stringValue }.map(ServerText.oneLine))
        case 403:
            return .rejected(
                status: status,
                message: forbiddenReason(body.flatMap { $0["error"]?.stringValue }.map(ServerText.oneLine)))
        case 409, 412:
            guard let serverItem, serverItem.isServerCopy else { return .serverCopyNeeded(status: status) }
            return classify(kind: kind, sent: sent, refusedWith: status, serverCopy: serverItem)
        case _ where notFoundStatuses.contains(status):
            if kind == .delete { return .applied(nil) }
            return .conflict(status: status, server: nil)
        case 500...:
            return .serverFault(status: status, message: message)
        default:
            return .rejected(status: status, message: message)
        }
    }

    /// Classifies a refusal (409 or 412) once the server's copy of the record is known: `serverCopy` is the copy
    /// that came with the refusal or was read after it (`nil`: the server has no such record). A copy that says
    /// what was sent is a lost acknowledgement (applied); so is a delete of a record that is gone.
    static func classify(
        kind: PendingOperation.Kind, sent: [String: JSONValue]?, refusedWith status: Int,
        serverCopy: ServerRecord?
    ) -> PushOutcome {
        guard let serverCopy else { return kind == .delete ? .applied(nil) : .conflict(status: status, server: nil) }
        if sayTheSame(kind: kind, sent: sent, server: serverCopy) { return .applied(serverCopy) }
        if kind == .delete, serverCopy.deleted { return .applied(serverCopy) }
        return .conflict(status: status, server: serverCopy)
    }

    /// Why a 403 is set aside, with the server's own words when it gave some.
    static func forbiddenReason(_ serverMessage: String?) -> String {
        let said = serverMessage.map { " (\($0))" } ?? ""
        return "the server does not allow this user to make this change\(said)"
    }

    /// `true` when the server's copy already holds what the operation sent.
    static func sayTheSame(kind: PendingOperation.Kind, sent: [String: JSONValue]?, server: ServerRecord) -> Bool {
        guard kind != .delete, let sent, !server.deleted else { return false }
        return server.content == ServerRecord.content(sent)
    }
}
