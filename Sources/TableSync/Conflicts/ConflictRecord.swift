import SyncProtocol
import TableSyncStorage

/// An operation the server refused, or one the store held back before sending because the server's copy or the
/// record file says something else, kept under `conflicts/<Table>/<record file name>` until a person (or
/// `tablesync resolve`) decides. The operation itself stays in the journal meanwhile and is not sent.
///
/// ```json
/// {
///   "local": { "id": "a1", "text": "mine" },
///   "operation": { "id": "a1", "op": "update", "seq": 4, "table": "todo", "version": "v1" },
///   "reason": "the server's copy changed since version v1",
///   "server": { "id": "a1", "text": "theirs", "version": "v2", ... },
///   "status": 412
/// }
/// ```
public struct ConflictRecord: Sendable, Equatable {
    /// The refused operation as it is in the journal.
    public var operation: PendingOperation
    /// What was sent (`nil` for a delete).
    public var local: [String: JSONValue]?
    /// The server's copy when it sent one (`nil` when the record is gone from the server).
    public var server: [String: JSONValue]?
    /// The HTTP status of the refusal; `nil` when nothing was sent (the conflict was found by comparing the file
    /// with the server's copy, or with a pending delete).
    public var status: Int?
    /// Why, in words.
    public var reason: String

    /// The record's table and id.
    public var key: RecordKey { operation.key }

    /// `true` for a refusal because the server's copy changed (409, 412, gone), or a conflict found before sending;
    /// `false` for other refusals.
    package var isVersionConflict: Bool { status.map { [404, 409, 410, 412].contains($0) } ?? true }

    /// Whether the server answered that it has no such record (404, 410): its side is known without asking.
    var recordIsGone: Bool { status == 404 || status == 410 }

    /// What happened, in a few words: `update refused (HTTP 412)`, or `update held back` for one never sent.
    package var summary: String {
        status.map { "\(operation.kind.rawValue) refused (HTTP \($0))" }
            ?? "\(operation.kind.rawValue) held back, not sent"
    }

    var json: JSONValue {
        [
            "operation": operation.json,
            "local": local.map { .object($0) } ?? .null,
            "server": server.map { .object($0) } ?? .null,
            "status": status.map { .integer(Int64($0)) } ?? .null,
            "reason": .string(reason)
        ]
    }

    init(
        operation: PendingOperation, local: [String: JSONValue]?, server: ServerRecord?, status: Int?,
        reason: String
    ) {
        self.operation = operation
        self.local = local
        self.server = server?.properties
        self.status = status
        self.reason = reason
    }

    /// The server's copy checked as one from the server is (``ServerRecord``): a conflict file can be edited by
    /// hand, and taking the server's side writes this copy to a record file. `file` names the conflict file in the
    /// error.
    func serverRecord(file: String) throws -> ServerRecord? {
        guard let server else { return nil }
        do {
            return try ServerRecord(validating: .object(server), requireUpdatedAt: false)
        } catch {
            throw StoreError.invalidSettings(file: file, field: "server", reason: error.reason)
        }
    }

    init(json: JSONValue, file: String) throws {
        guard let operationJSON = json["operation"] else {
            throw StoreError.invalidSettings(
                file: file, field: "operation", reason: "a conflict file needs \"operation\"")
        }
        do {
            operation = try PendingOperation(json: operationJSON)
        } catch {
            throw StoreError.invalidSettings(file: file, field: "operation", reason: error.reason)
        }
        local = json["local"]?.objectValue
        server = json["server"]?.objectValue
        status = json["status"]?.integerValue.map { Int($0) }
        reason = json["reason"]?.stringValue ?? ""
    }
}

extension ConflictRecord {
    /// `operation`, the pending change of this version conflict, rebased to send the local side over `server` (the
    /// server's copy, `nil` when it has none): the file's content, or the delete when the conflict has no local
    /// content. `nil` when nothing is left to send: a delete kept over a record the server deleted too.
    /// - Throws: ``StoreError/operationRejected(table:id:reason:)`` when the server keeps the record as deleted
    ///   without a version to bring it back on.
    func keepingLocal(_ operation: PendingOperation, server: ServerRecord?) throws -> PendingOperation? {
        var operation = operation
        let sendsContent = local != nil
        if let server, !server.deleted, let version = server.version {
            operation.kind = sendsContent ? .update : .delete
            operation.baseVersion = version
        } else if sendsContent, server?.deleted != true {
            // The server has no such record (removed for good, or never had it): the content goes in anew.
            operation.kind = .insert
            operation.baseVersion = nil
        } else if sendsContent, let version = server?.version {
            // The server keeps the record as deleted: the push brings it back on that version, then updates it.
            operation.kind = .update
            operation.baseVersion = version
            operation.undelete = true
        } else if sendsContent {
            throw StoreError.operationRejected(
                table: operation.table, id: operation.id,
                reason: "the server keeps the record as deleted without a version to bring it back on; "
                    + "take the server's side or discard the record")
        } else {
            return nil
        }
        if operation.kind != .delete { operation.item = nil }
        return operation
    }
}
