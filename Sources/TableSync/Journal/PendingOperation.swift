import SyncProtocol
import TableSyncStorage

/// One change waiting to be pushed: a line of `journal.jsonl`.
///
/// Inserts and updates carry no content: push sends the record file as it is then. A delete carries the
/// item as it was (the file is gone), so the change can be shown and undone.
public struct PendingOperation: Sendable, Equatable {
    /// What the operation does on the server.
    public enum Kind: String, Sendable, CaseIterable {
        case insert, update, delete
    }

    /// The operation's place in the journal; push sends operations in this order.
    package var sequence: Int64
    /// Insert, update or delete.
    public var kind: Kind
    /// The record's table.
    public var table: String
    /// The record's id.
    public var id: String
    /// The server version the change was made on (`If-Match`); `nil` for an insert.
    package var baseVersion: String?
    /// For a delete, the record as it was.
    package var item: JSONValue?
    /// For an update of a record the server keeps as deleted (a conflict settled by keeping the local side):
    /// the push brings the record back first (``TableClient/undelete(table:id:baseVersion:)``), on `baseVersion`,
    /// the deleted record's version, then sends the update on the version that gives it.
    package var undelete: Bool
    /// The clone of a store kept in git that queued the operation (``CloneIdentity``): only that clone sends it,
    /// another that got it through a merge leaves it to its origin. `nil` for an operation queued outside git (or
    /// by an earlier version), which any clone holding it sends.
    package var origin: String?
    /// The operation's own id, unique across clones: once it is sent, its acknowledgement (``Acknowledgements``)
    /// drops it from any journal that git brings it back into. `nil` with ``origin``.
    package var operationID: String?

    /// An operation as the journal holds it.
    package init(
        sequence: Int64, kind: Kind, table: String, id: String, baseVersion: String? = nil, item: JSONValue? = nil,
        undelete: Bool = false, origin: String? = nil, operationID: String? = nil
    ) {
        self.sequence = sequence
        self.kind = kind
        self.table = table
        self.id = id
        self.baseVersion = baseVersion
        self.item = item
        self.undelete = undelete
        self.origin = origin
        self.operationID = operationID
    }

    /// The record this operation is about.
    package var key: RecordKey { RecordKey(table: table, id: id) }

    /// Whether the clone `clone` sends the operation: it queued it, or nobody in git did. A clone outside git
    /// (`clone` nil) sends every operation it holds.
    package func isSent(by clone: String?) -> Bool {
        origin == nil || clone == nil || origin == clone
    }

    /// This operation as the clone `origin` would have queued it, with an id of its own: for one another clone
    /// queued that this clone takes over (by `take-over`, a resolution or an edit of its own).
    func takenOver(by origin: String?) -> PendingOperation {
        var taken = self
        taken.origin = origin
        taken.operationID = origin.map { _ in Journal.newOperationID() }
        return taken
    }

    /// The journal line (compact canonical JSON, without the newline).
    package var json: JSONValue {
        var members: [String: JSONValue] = [
            "seq": .integer(sequence), "op": .string(kind.rawValue), "table": .string(table), "id": .string(id)
        ]
        if let baseVersion { members["version"] = .string(baseVersion) }
        if let item { members["item"] = item }
        if undelete { members["undelete"] = true }
        if let origin { members["origin"] = .string(origin) }
        if let operationID { members["opid"] = .string(operationID) }
        return .object(members)
    }

    /// Reads a journal line; the error says which field is wrong.
    package init(json: JSONValue) throws(OperationFormatError) {
        guard case .object(let members) = json else {
            throw OperationFormatError("expected a JSON object, found \(json.typeName)")
        }
        guard let sequence = members["seq"]?.integerValue, sequence > 0 else {
            throw OperationFormatError("\"seq\" must be a positive integer")
        }
        guard let kindText = members["op"]?.stringValue, let kind = Kind(rawValue: kindText) else {
            throw OperationFormatError("\"op\" must be one of insert, update, delete")
        }
        guard let table = members["table"]?.stringValue, TableName.isValid(table) else {
            throw OperationFormatError("\"table\" must be a valid table name")
        }
        guard let id = members["id"]?.stringValue else { throw OperationFormatError("\"id\" must be a string") }
        if let problem = RecordID.problem(with: id) { throw OperationFormatError("\"id\": \(problem)") }
        var baseVersion: String?
        switch members["version"] {
        case nil, .null?: baseVersion = nil
        case .string(let text)?: baseVersion = text
        case .some: throw OperationFormatError("\"version\" must be a string")
        }
        if kind != .insert && baseVersion == nil && members["version"] != nil {
            throw OperationFormatError("\"version\" must be a string")
        }
        self.init(
            sequence: sequence, kind: kind, table: table, id: id, baseVersion: baseVersion,
            item: members["item"].flatMap { $0.isNull ? nil : $0 }, undelete: members["undelete"]?.boolValue == true,
            origin: members["origin"]?.stringValue, operationID: members["opid"]?.stringValue)
    }
}

/// Why a journal line is not a valid operation.
package struct OperationFormatError: Error, Sendable, Equatable {
    /// What is wrong with the line.
    package let reason: String
    init(_ reason: String) { self.reason = reason }
}
