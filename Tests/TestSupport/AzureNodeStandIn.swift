import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SyncProtocol
import TableSync

/// An in-process server that answers the table protocol the way azure-mobile-apps-node 4.0.1 (the Azure node
/// backend) does where it differs from tablesync-server. A stand-in, on purpose: the node server cannot run in
/// these tests, and tablesync-server cannot be made to answer as it does.
///
/// The behaviours it stands for, each seen against the real node server:
/// - `ZUMO-API-VERSION` other than 2.x is refused with 400 on every table request;
/// - `GET /health` is a 404 without TableSync's extensions header (a stock server: SDK paging, one request per
///   operation);
/// - a duplicate insert is answered 409 with the item that was *submitted* (no `version`, no `updatedAt`);
/// - an insert whose `id` is missing, `null` or `""` gets a generated id; any other string is accepted as the id,
///   `bad/id` included;
/// - `updatedAt` is written with milliseconds and may be shared by several records;
/// - lists are v2 bare arrays; a `$top` above `maxTop` is cut to `maxTop`, 50 records without `$top`.
/// Records live in memory; deletes are soft.
public final class AzureNodeStandIn: Sendable {
    /// `http://127.0.0.1:PORT`.
    public let baseURL: String
    private let running: RunningApplication
    private let store: Store

    /// The tables' records, in memory.
    actor Store {
        var tables: [String: [String: [String: JSONValue]]]
        var writes: Int64 = 0

        init(tables: [String]) {
            self.tables = Dictionary(uniqueKeysWithValues: tables.map { ($0.lowercased(), [:]) })
        }

        /// A new version and `updatedAt` (milliseconds, as node writes them).
        func stamp() -> (version: String, updatedAt: String) {
            writes += 1
            let milliseconds = Int64(Date().timeIntervalSince1970 * 1000)
            let version = Data(String(writes).utf8).base64EncodedString()
            return (version, Timestamp(ticks: milliseconds * 10_000).text)
        }

        func put(_ record: [String: JSONValue], table: String) {
            tables[table.lowercased(), default: [:]][record["id"]?.stringValue ?? ""] = record
        }
        func record(_ id: String, table: String) -> [String: JSONValue]? { tables[table.lowercased()]?[id] }
        func records(table: String) -> [[String: JSONValue]]? { tables[table.lowercased()].map { Array($0.values) } }
    }

    /// Starts serving `tables` on a free loopback port.
    public static func start(tables: [String], maxTop: Int = 1000) async throws -> AzureNodeStandIn {
        let store = Store(tables: tables)
        var logger = Logger(label: "azure-node-stand-in")
        logger.logLevel = .warning
        let router = Router(context: BasicRequestContext.self)
        router.get("/tables/:table") { request, context in
            try await answer(request, context, store) { table in
                let query = StandInHTTP.queryItems(request.uri.query)
                guard var records = await store.records(table: table) else { return (404, ["error": "no such table"]) }
                if query["__includeDeleted"]?.lowercased() != "true" {
                    records = records.filter { $0["deleted"] != true }
                }
                let top = min(query["$top"].flatMap { Int($0) } ?? 50, maxTop)
                let local = try LocalQuery(
                    filter: query["$filter"], orderBy: query["$orderby"], skip: query["$skip"].flatMap { Int($0) } ?? 0,
                    top: top)
                return (200, .array(local.apply(to: records).map { .object($0) }))
            }
        }
        // As node 4.0.1: a deleted record read by id is not found, `__includeDeleted=true` or not; only the list
        // form (`$filter=id eq '…'&__includeDeleted=true`) returns it.
        router.get("/tables/:table/:id") { request, context in
            try await answer(request, context, store) { table in
                let id = context.parameters.get("id") ?? ""
                guard let record = await store.record(id, table: table), record["deleted"] != true else {
                    return (404, ["error": "not found"])
                }
                return (200, .object(record))
            }
        }
        router.post("/tables/:table") { request, context in
            try await answer(request, context, store) { table in
                guard
                    case .object(var item)? = try? await StandInHTTP.body(of: request)
                else {
                    return (400, ["error": "the body is not an object"])
                }
                var id = item["id"]?.stringValue ?? ""
                if id.isEmpty { id = UUID().uuidString.lowercased() }
                if await store.record(id, table: table) != nil { return (409, .object(item)) }
                let (version, updatedAt) = await store.stamp()
                item["id"] = .string(id)
                item["version"] = .string(version)
                item["createdAt"] = .string(updatedAt)
                item["updatedAt"] = .string(updatedAt)
                item["deleted"] = false
                await store.put(item, table: table)
                return (201, .object(item))
            }
        }
        // Undelete: a soft-deleted record comes back on its version (If-Match), with a new one.
        router.post("/tables/:table/:id") { request, context in
            try await answer(request, context, store) { table in
                let id = context.parameters.get("id") ?? ""
                guard var record = await store.record(id, table: table) else { return (404, ["error": "not found"]) }
                if let expected = Self.ifMatch(request), record["version"]?.stringValue != expected {
                    return (412, .object(record))
                }
                guard record["deleted"] == true else { return (409, .object(record)) }
                let (version, updatedAt) = await store.stamp()
                record["version"] = .string(version)
                record["updatedAt"] = .string(updatedAt)
                record["deleted"] = false
                await store.put(record, table: table)
                return (200, .object(record))
            }
        }
        router.patch("/tables/:table/:id") { request, context in
            try await answer(request, context, store) { table in
                let id = context.parameters.get("id") ?? ""
                guard var record = await store.record(id, table: table), record["deleted"] != true else {
                    return (404, ["error": "not found"])
                }
                if let expected = Self.ifMatch(request), record["version"]?.stringValue != expected {
                    return (412, .object(record))
                }
                guard
                    case .object(let changes)? = try? await StandInHTTP.body(of: request)
                else {
                    return (400, ["error": "the body is not an object"])
                }
                for (name, value) in changes
                where !["id", "version", "createdAt", "updatedAt", "deleted"].contains(name) { record[name] = value }
                let (version, updatedAt) = await store.stamp()
                record["version"] = .string(version)
                record["updatedAt"] = .string(updatedAt)
                await store.put(record, table: table)
                return (200, .object(record))
            }
        }
        router.delete("/tables/:table/:id") { request, context in
            try await answer(request, context, store) { table in
                let id = context.parameters.get("id") ?? ""
                guard var record = await store.record(id, table: table), record["deleted"] != true else {
                    return (404, ["error": "not found"])
                }
                if let expected = Self.ifMatch(request), record["version"]?.stringValue != expected {
                    return (412, .object(record))
                }
                let (version, updatedAt) = await store.stamp()
                record["version"] = .string(version)
                record["updatedAt"] = .string(updatedAt)
                record["deleted"] = true
                await store.put(record, table: table)
                return (200, .object(record))
            }
        }
        let running = try await RunningApplication.serving(router, logger: logger)
        return AzureNodeStandIn(baseURL: "http://127.0.0.1:\(running.port)", running: running, store: store)
    }

    private init(baseURL: String, running: RunningApplication, store: Store) {
        self.baseURL = baseURL
        self.running = running
        self.store = store
    }

    /// The record `id` of `table` as the server holds it.
    public func record(_ id: String, table: String) async -> [String: JSONValue]? {
        await store.record(id, table: table)
    }

    /// Stops the server and waits until it has.
    public func stop() async {
        await running.stop()
    }

    /// Answers a table request: 400 unless it speaks version 2, 404 for an unknown table, else what `handle` says.
    private static func answer(
        _ request: Request, _ context: BasicRequestContext, _ store: Store,
        _ handle: (String) async throws -> (Int, JSONValue)
    ) async throws -> Response {
        let version =
            request.headers[HTTPField.Name(ProtocolHeader.apiVersion)!]
            ?? StandInHTTP.queryItems(request.uri.query)[ProtocolHeader.apiVersion]
        let table = context.parameters.get("table") ?? ""
        let (status, body): (Int, JSONValue)
        if version?.hasPrefix("2.") != true {
            (status, body) = (400, ["error": "An invalid ZUMO-API-VERSION was specified; this server speaks 2.0.0"])
        } else if await store.records(table: table) == nil {
            (status, body) = (404, ["error": "no such table"])
        } else {
            (status, body) = try await handle(table)
        }
        return StandInHTTP.json(status, body)
    }

    /// The `If-Match` version, without quotes.
    private static func ifMatch(_ request: Request) -> String? {
        request.headers[.ifMatch].map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")) }
    }

}
