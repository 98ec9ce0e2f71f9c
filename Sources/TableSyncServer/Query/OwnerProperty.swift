import SyncProtocol

/// `owner`, the property a per-user table (``TableOptions/perUser``) reserves for its records' owner: the server
/// keeps the owner outside the record (``RecordScope``) and never sends it, and a client may neither set it nor
/// name it in a query. Reserving the name keeps a client from storing a property that looks like the owner, and
/// from a `$filter` that seems to choose owners. Matched without regard to case, as system properties are.
enum OwnerProperty {
    static let name = "owner"

    /// Refuses a record body of a per-user table that sets the owner (400).
    static func checkNotSent(_ properties: [String: JSONValue], table: TableOptions) throws(ProtocolError) {
        guard table.perUser, properties.keys.contains(where: isOwner) else { return }
        throw ProtocolError.badRequest(
            "table \(table.name) keeps records per user: '\(name)' is set by the server, not by a request")
    }

    /// Refuses a query of a per-user table whose `$filter`, `$orderby` or `$select` names the owner (400).
    static func checkNotQueried(_ query: ListQuery, table: TableOptions) throws(ProtocolError) {
        guard table.perUser else { return }
        let named = (query.filter?.propertyNames ?? []) + query.orderBy.map(\.property) + (query.select ?? [])
        guard named.contains(where: isOwner) else { return }
        throw ProtocolError.badRequest(
            """
            table \(table.name) keeps records per user: '\(name)' cannot be queried, every answer holds your records \
            only
            """
        )
    }

    static func isOwner(_ property: String) -> Bool { property.caseInsensitiveEquals(name) }
}
