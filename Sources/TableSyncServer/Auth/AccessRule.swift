import SyncProtocol

/// Whether a request may do an operation on a table, and whose rows it reaches: the one rule every route and
/// every batch operation asks.
enum AccessRule {
    /// The rows `identity` reaches when it may do `operation` on `table`; otherwise the refusal: 401 without valid
    /// credentials where they are needed, 403 for credentials without the required role or, on a per-user table,
    /// without a subject, 405 for an operation the table does not offer. `checksCredentials` tells whether the
    /// server has any static token or JWT key.
    static func scope(
        of table: TableOptions, for operation: TableOperation, identity: RequestIdentity?, checksCredentials: Bool
    ) throws(ProtocolError) -> RecordScope {
        switch table.access(for: operation, checksCredentials: checksCredentials) {
        case .disabled:
            throw ProtocolError(
                status: .methodNotAllowed,
                message: "table \(table.name) does not allow \(operation == .read ? "reading" : "writing")")
        case .anonymous:
            break
        case .authenticated:
            guard identity != nil else { throw ProtocolError.unauthorized }
        case .role(let role):
            guard let identity else { throw ProtocolError.unauthorized }
            guard identity.roles.contains(role) else {
                throw ProtocolError(
                    status: .forbidden,
                    message:
                        "table \(table.name) needs the role '\(role)' for \(operation == .read ? "reading" : "writing")"
                )
            }
        }
        guard table.perUser else { return RecordScope(table: table.name) }
        guard let subject = identity?.subject else {
            throw ProtocolError(
                status: .forbidden,
                message: "table \(table.name) keeps records per user, and the credentials name no user")
        }
        return RecordScope(table: table.name, owner: subject)
    }
}
