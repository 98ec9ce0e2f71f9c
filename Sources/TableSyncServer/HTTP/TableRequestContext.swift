import Hummingbird
import SyncProtocol

/// What a request of the table protocol carries once middleware has read it: who sent it
/// (``AuthenticationMiddleware``), the protocol version it speaks and its decoded query string
/// (``ProtocolVersionMiddleware``), and for `/tables/{table}` routes the served table and the records the request
/// may reach (``TableMiddleware``). Routes read them here instead of deriving them again.
public struct TableRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The protocol version the request speaks; set by ``ProtocolVersionMiddleware``.
    var protocolVersion: ProtocolVersion?
    /// The request's query string, decoded as a form; set by ``ProtocolVersionMiddleware``.
    var query = QueryString()
    /// The table the URL names; set by ``TableMiddleware``.
    var table: TableOptions?
    /// Who the request's credentials stand for, or `nil` without credentials; set by ``AuthenticationMiddleware``.
    var identity: RequestIdentity?
    /// The records of ``table`` the request may reach (``AccessRule``); set by ``TableMiddleware``.
    var scope: RecordScope?

    /// A context for a request arriving from `source`.
    public init(source: Source) {
        coreContext = .init(source: source)
    }

    /// ``protocolVersion``, which a route behind ``ProtocolVersionMiddleware`` always has.
    func version() throws(ProtocolError) -> ProtocolVersion {
        guard let protocolVersion else { throw ProtocolError.missingContext("protocol version") }
        return protocolVersion
    }

    /// ``table``, which a route behind ``TableMiddleware`` always has.
    func servedTable() throws(ProtocolError) -> TableOptions {
        guard let table else { throw ProtocolError.missingContext("table") }
        return table
    }

    /// ``scope``, which a route behind ``TableMiddleware`` always has.
    func recordScope() throws(ProtocolError) -> RecordScope {
        guard let scope else { throw ProtocolError.missingContext("record scope") }
        return scope
    }

    /// The record id in the URL, percent-decoded and checked against the id rule (400 otherwise).
    func recordID() throws(ProtocolError) -> String {
        guard let rawID = parameters.get("id") else { throw ProtocolError.badRequest("the URL has no record id") }
        let id = try QueryString.decodePathSegment(Substring(rawID))
        if let problem = RecordID.problem(with: id) {
            throw ProtocolError.badRequest("id '\(id)' is not allowed: \(problem)")
        }
        return id
    }
}
