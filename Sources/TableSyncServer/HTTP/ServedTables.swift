import SyncProtocol

/// The tables a server serves, found by the name a request gives in any case. The one answer for a name it does not
/// serve: a 404, or a 401 without credentials on a server that checks them, so that table names are told to no one.
struct ServedTables: Sendable {
    /// The served tables by lowercased name.
    let byName: [String: TableOptions]
    /// Whether the server has static tokens or JWT keys (``Authenticator/checksCredentials``).
    let checksCredentials: Bool

    /// The table named `name` (in any case); throws the refusal above when there is none.
    func table(named name: String, identity: RequestIdentity?) throws(ProtocolError) -> TableOptions {
        guard let table = byName[name.lowercased()] else {
            if checksCredentials && identity == nil { throw ProtocolError.unauthorized }
            throw ProtocolError.notFound("there is no table '\(name)' on this server")
        }
        return table
    }
}
