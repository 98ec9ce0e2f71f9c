import HTTPTypes
import Hummingbird
import SyncProtocol

/// Finds the served table a `/tables/{table}` URL names (in any case; 404 when there is none, or 401 without
/// credentials on a server that checks them, so that table names are not told to anyone) and puts it in the
/// ``TableRequestContext``, with the records the request may reach as the table's access rules say (``AccessRule``:
/// GET reads, every other method writes). Every answer to a list request, a refusal included, says the table's largest
/// `$top`
/// (``ProtocolHeader/maxTop``), so a client that asked for more learns what to ask for.
struct TableMiddleware: RouterMiddleware {
    typealias Context = TableRequestContext

    /// The served tables by lowercased name.
    let tables: [String: TableOptions]
    /// Renders a refusal of a list request here, so that its answer carries the header too.
    let writer: ResponseWriter
    /// Whether the server has static tokens or JWT keys (``Authenticator/checksCredentials``).
    let checksCredentials: Bool

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let name = try QueryString.decodePathSegment(Substring(context.parameters.get("table") ?? ""))
        let table = try ServedTables(byName: tables, checksCredentials: checksCredentials)
            .table(named: name, identity: context.identity)
        var context = context
        context.table = table
        context.scope = try scope(of: table, request: request, identity: context.identity)
        guard request.method == .get, context.parameters.get("id") == nil else {
            return try await next(request, context)
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            guard let refusal = ProtocolError.refusal(for: error, during: .query) else { throw error }
            response = writer.error(refusal, request: request)
        }
        response.headers[HTTPField.Name(ProtocolHeader.maxTop)!] = String(table.maxTop)
        return response
    }

    /// The records `identity` reaches in `table` with `request`'s method (GET reads, the others write); a 405 for an
    /// operation the table does not offer names in `Allow` the methods it does.
    private func scope(
        of table: TableOptions, request: Request, identity: RequestIdentity?
    ) throws(ProtocolError) -> RecordScope {
        do {
            return try AccessRule.scope(
                of: table, for: request.method == .get ? .read : .write, identity: identity,
                checksCredentials: checksCredentials)
        } catch {
            guard error.status == .methodNotAllowed else { throw error }
            var refusal = error
            refusal.allowedMethods = (RouteMethods.allowed(path: request.uri.path, batch: false) ?? []).filter {
                method in
                table.access(for: method == .get ? .read : .write, checksCredentials: checksCredentials) != .disabled
            }
            throw refusal
        }
    }
}
