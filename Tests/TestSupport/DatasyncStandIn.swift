import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SyncProtocol
import TableSync

/// An in-process server that answers the table protocol the way CommunityToolkit Datasync's ASP.NET Core server
/// does (`TableController<T>` with `EnableSoftDelete = true` and the default `TableControllerOptions`, over a
/// repository that stamps each write as `InMemoryRepository` does). A stand-in, on purpose: a .NET server cannot
/// run in these tests. Each behaviour, with the Datasync source (`src/CommunityToolkit.Datasync.Server/`) or test
/// (`tests/CommunityToolkit.Datasync.Server.Test/`) it is transcribed from:
/// - `ZUMO-API-VERSION` is not read at all: no filter or controller of the server looks at it, so a request without
///   it, or with `2.0.0`, gets the same v3 answers (`Controllers/TableController.cs`,
///   `Filters/DatasyncControllerAttribute.cs`);
/// - `GET /health`, `POST /batch`, `GET /changes` are 404 and no response carries TableSync's extensions header: a
///   stock server (one request per operation, polling in `watch`); PATCH and `POST /tables/T/{id}` are 405, since
///   the controller routes only GET, PUT and DELETE by id;
/// - lists answer `{"items":[…],"count":…,"nextLink":…}`; `count` only when `$count` is given, and counts every
///   record the `$filter` matches (`$skip` and `$top` aside); a page holds at most `pageSize` (100) records; `$top`
///   above `maxTop` (128,000), a negative or non-numeric `$top` or `$skip` is 400 (`TableController.Query.cs`,
///   `Models/TableControllerOptions.cs`, `FailedQueryTest` in `Service/Query_Tests.cs`);
/// - `nextLink` is the request's query string alone, without path or `?`: its parameters as sent, less `$skip` and
///   `$top`, then `$skip` advanced by the records sent and, when `$top` was given, `$top` lowered by them; none once
///   every matching record or the `$top` asked is sent (`BuildPagedResult` and `CreateNextLink` in
///   `TableController.Query.cs`; `Query_Test_002`, `Paging_Test_*` in `Service/Query_Tests.cs`);
/// - records are ordered by `$orderby`, then by `id`, and by `id` alone without one (`EnsureStableOrdering`;
///   `ApplyODataOrderBy` in `Extensions/InternalExtensions.cs`);
/// - a `$filter` with a date-time written `datetimeoffset'…'` or `datetime'…'` is 400: OData v4's parser reads it as
///   a string literal without its opening quote (Microsoft.OData.Core's `ExpressionLexer` and
///   `UriPrimitiveTypeParser`, which ASP.NET Core OData uses); the bare form (`updatedAt ge 2024-01-02T03:04:05.123Z`)
///   is the one it takes;
/// - `__includedeleted=true` (name and value in any case) includes soft-deleted records; without it a list leaves
///   them out and a read, replace or delete of one is 410 (`ShouldIncludeDeletedEntities` and `ApplyDeletedView` in
///   `Extensions/InternalExtensions.cs`, `TableController.Read.cs`, `TableController.Replace.cs`,
///   `TableController.Delete.cs`);
/// - each write stamps `updatedAt` (milliseconds, as `DateTimeOffsetConverter` writes it, so several records may share
///   one) and a new `version`, base64 as `ToEntityTagValue` writes it; `ETag` is that version in quotes
///   (`SetConditionalHeaders`); records have no `createdAt` (`ITableData`);
/// - a create answers 201 with the entity and `Location`; an `id` that is missing, `null` or `""` becomes a new guid;
///   an existing id, deleted or not, is 409 with the stored entity (`TableController.Create.cs`,
///   `InMemoryRepository.CreateAsync`);
/// - a replace (PUT) whose body's `id` differs from the URL's is 400; `If-Match` that names another version is 412
///   with the stored entity; the body replaces the record, `deleted` included (`TableController.Replace.cs`,
///   `ParseConditionalRequest`);
/// - a delete of a deleted record is 410 whatever the query; a stale `If-Match` is 412 with the entity; otherwise the
///   record is marked deleted with a new version and the answer is 204 without a body (`TableController.Delete.cs`);
/// - an `If-Match` that is not a quoted entity tag is ignored, as ASP.NET Core's typed headers drop it; `*` matches.
/// Records live in memory.
public final class DatasyncStandIn: Sendable {
    /// `http://127.0.0.1:PORT`.
    public let baseURL: String
    private let running: RunningApplication
    private let store: Store

    /// The tables' records, in memory, and the requests received.
    actor Store {
        var tables: [String: [String: [String: JSONValue]]]
        var writes: UInt64 = 0
        var received: [String] = []

        init(tables: [String]) {
            self.tables = Dictionary(uniqueKeysWithValues: tables.map { ($0.lowercased(), [:]) })
        }

        /// A new version (eight bytes, as a SQL Server `rowversion`, in base64) and `updatedAt` now, in milliseconds.
        func stamp() -> (version: String, updatedAt: String) {
            (nextVersion(), DatasyncStandIn.millisecondText(Date()))
        }

        func nextVersion() -> String {
            writes += 1
            return Data(withUnsafeBytes(of: writes.bigEndian) { Array($0) }).base64EncodedString()
        }

        func put(_ record: [String: JSONValue], table: String) {
            tables[table.lowercased(), default: [:]][record[SystemProperty.id]?.stringValue ?? ""] = record
            lastMatch = nil
        }

        /// The last list's query and the rows it matched, kept until the next write: a pull's pages differ only in
        /// `$skip`, and sorting thousands of rows for each of them would make the stand-in, not the client, the
        /// slow part of a test.
        private var lastMatch: (query: [String], rows: [[String: JSONValue]])?

        /// The rows of `table` that `filter` matches, soft-deleted ones only when `includingDeleted`, in Datasync's
        /// order: `orderBy`, then `id`. Throws ``LocalQueryError`` for a filter or order it cannot read.
        func matching(
            table: String, filter: String?, orderBy: String?, includingDeleted: Bool
        ) throws -> [[String: JSONValue]] {
            let query = [table.lowercased(), filter ?? "", orderBy ?? "", String(includingDeleted)]
            if let lastMatch, lastMatch.query == query { return lastMatch.rows }
            var rows = records(table: table) ?? []
            if !includingDeleted { rows = rows.filter { $0[SystemProperty.deleted] != true } }
            rows = try LocalQuery(filter: filter, orderBy: orderBy).apply(to: rows)
            lastMatch = (query, rows)
            return rows
        }

        func record(_ id: String, table: String) -> [String: JSONValue]? { tables[table.lowercased()]?[id] }
        func records(table: String) -> [[String: JSONValue]]? { tables[table.lowercased()].map { Array($0.values) } }
        func note(_ request: String) { received.append(request) }
    }

    /// Starts serving `tables` on a free loopback port, `pageSize` records a page at most and `$top` up to `maxTop`
    /// (`TableControllerOptions`' defaults).
    public static func start(
        tables: [String], pageSize: Int = 100, maxTop: Int = 128_000
    ) async throws
        -> DatasyncStandIn
    {
        let store = Store(tables: tables)
        var logger = Logger(label: "datasync-stand-in")
        logger.logLevel = .warning
        let router = Router(context: BasicRequestContext.self)
        router.get("/tables/:table") { request, context in
            try await answer(request, context, store) { table in
                let raw = request.uri.query ?? ""
                let items = StandInHTTP.queryItems(raw)
                let skip: Int
                let top: Int?
                switch (queryNumber(items["$skip"]), queryNumber(items["$top"])) {
                case (.invalid, _): return .error(400, "The value of $skip is not a non-negative integer")
                case (_, .invalid): return .error(400, "The value of $top is not a non-negative integer")
                case (let skipValue, let topValue):
                    skip = skipValue.value ?? 0
                    top = topValue.value
                }
                if let top, top > maxTop {
                    return .error(400, "The limit of '\(maxTop)' for Top query has been exceeded")
                }
                if let filter = items["$filter"], let literal = legacyDateTimeLiteral(in: filter) {
                    return .error(400, "Unrecognized 'Edm.String' literal '\(literal)' in '\(filter)'")
                }
                let matching: [[String: JSONValue]]
                do {
                    matching = try await store.matching(
                        table: table, filter: items["$filter"], orderBy: items["$orderby"],
                        includingDeleted: includesDeleted(items))
                } catch {
                    return .error(400, "\(error)")
                }
                let page = Array(matching.dropFirst(skip).prefix(min(top ?? Int.max, pageSize)))
                let link = nextLink(query: raw, skip: skip, top: top, sent: page.count, count: matching.count)
                var body: [String: JSONValue] = ["items": .array(page.map { .object($0) })]
                if items["$count"] != nil { body["count"] = .integer(Int64(matching.count)) }
                body["nextLink"] = link.map { .string($0) } ?? .null
                return .json(200, .object(body))
            }
        }
        router.get("/tables/:table/:id") { request, context in
            try await answer(request, context, store) { table in
                let id = context.parameters.get("id") ?? ""
                guard let record = await store.record(id, table: table) else { return .error(404, "not found") }
                if record[SystemProperty.deleted] == true && !includesDeleted(StandInHTTP.queryItems(request.uri.query))
                {
                    return .error(410, "deleted")
                }
                return .entity(200, record)
            }
        }
        router.post("/tables/:table") { request, context in
            try await answer(request, context, store) { table in
                guard case .object(var entity)? = try? await StandInHTTP.body(of: request) else {
                    return .error(400, "Invalid JSON content")
                }
                var id = entity[SystemProperty.id]?.stringValue ?? ""
                if id.isEmpty { id = UUID().uuidString.lowercased() }
                if let existing = await store.record(id, table: table) { return .entity(409, existing) }
                entity[SystemProperty.id] = .string(id)
                entity = await stamped(entity, store)
                await store.put(entity, table: table)
                return .entity(201, entity, location: "\(request.uri.path)/\(id)")
            }
        }
        router.put("/tables/:table/:id") { request, context in
            try await answer(request, context, store) { table in
                let id = context.parameters.get("id") ?? ""
                guard case .object(let entity)? = try? await StandInHTTP.body(of: request) else {
                    return .error(400, "Invalid JSON content")
                }
                guard entity[SystemProperty.id]?.stringValue == id else { return .error(400, "id mismatch") }
                guard let existing = await store.record(id, table: table) else { return .error(404, "not found") }
                if existing[SystemProperty.deleted] == true
                    && !includesDeleted(StandInHTTP.queryItems(request.uri.query))
                {
                    return .error(410, "deleted")
                }
                if !preconditionHolds(request, on: existing) { return .entity(412, existing) }
                let replaced = await stamped(entity, store)
                await store.put(replaced, table: table)
                return .entity(200, replaced)
            }
        }
        router.delete("/tables/:table/:id") { request, context in
            try await answer(request, context, store) { table in
                let id = context.parameters.get("id") ?? ""
                guard var existing = await store.record(id, table: table) else { return .error(404, "not found") }
                if existing[SystemProperty.deleted] == true { return .error(410, "already deleted") }
                if !preconditionHolds(request, on: existing) { return .entity(412, existing) }
                existing[SystemProperty.deleted] = true
                await store.put(await stamped(existing, store), table: table)
                return .empty(204)
            }
        }
        router.patch("/tables/:table/:id") { request, context in
            try await answer(request, context, store) { _ in .error(405, "Method Not Allowed") }
        }
        router.post("/tables/:table/:id") { request, context in
            try await answer(request, context, store) { _ in .error(405, "Method Not Allowed") }
        }
        let running = try await RunningApplication.serving(router, logger: logger)
        return DatasyncStandIn(baseURL: "http://127.0.0.1:\(running.port)", running: running, store: store)
    }

    private init(baseURL: String, running: RunningApplication, store: Store) {
        self.baseURL = baseURL
        self.running = running
        self.store = store
    }

    /// Puts `records` into `table` directly, as rows another program wrote: each gets a version of its own and
    /// `updatedAt` (all the same instant when given), and is not deleted.
    public func seed(_ records: [[String: JSONValue]], table: String, updatedAt: Date? = nil) async {
        for record in records {
            var row = await Self.stamped(record, store)
            if let updatedAt { row[SystemProperty.updatedAt] = .string(Self.millisecondText(updatedAt)) }
            await store.put(row, table: table)
        }
    }

    /// The record `id` of `table` as the server holds it.
    public func record(_ id: String, table: String) async -> [String: JSONValue]? {
        await store.record(id, table: table)
    }

    /// Every table request answered so far, in order, as `METHOD path?query STATUS` (the query as sent).
    public func requests() async -> [String] {
        await store.received
    }

    /// Stops the server and waits until it has.
    public func stop() async {
        await running.stop()
    }

    /// What a handler answers.
    private enum Answer {
        /// A JSON body.
        case json(Int, JSONValue)
        /// A record, with its `ETag` (and `Location` for a create).
        case entity(Int, [String: JSONValue], location: String? = nil)
        /// A status without a body.
        case empty(Int)

        /// An error with a message, as ASP.NET Core's problem answers carry one.
        static func error(_ status: Int, _ message: String) -> Answer { .json(status, ["error": .string(message)]) }

        var status: Int {
            switch self {
            case .json(let status, _), .entity(let status, _, _), .empty(let status): status
            }
        }
    }

    /// Answers a table request, 404 for an unknown table, else what `handle` says, and notes it with its status. No
    /// protocol version is asked for.
    private static func answer(
        _ request: Request, _ context: BasicRequestContext, _ store: Store,
        _ handle: (String) async throws -> Answer
    ) async throws -> Response {
        let table = context.parameters.get("table") ?? ""
        let answer =
            await store.records(table: table) == nil ? Answer.error(404, "no such table") : try await handle(table)
        let target = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        await store.note("\(request.method.rawValue) \(target) \(answer.status)")
        switch answer {
        case .json(let status, let body):
            return StandInHTTP.json(status, body)
        case .entity(let status, let record, let location):
            var headers: HTTPFields = [:]
            if let version = record[SystemProperty.version]?.stringValue { headers[.eTag] = "\"\(version)\"" }
            if let location { headers[.location] = location }
            return StandInHTTP.json(status, .object(record), headers: headers)
        case .empty(let status):
            return Response(status: .init(code: status))
        }
    }

    /// `entity` with a new `version` and `updatedAt`, and `deleted` false unless it says true.
    private static func stamped(_ entity: [String: JSONValue], _ store: Store) async -> [String: JSONValue] {
        var entity = entity
        let (version, updatedAt) = await store.stamp()
        entity[SystemProperty.version] = .string(version)
        entity[SystemProperty.updatedAt] = .string(updatedAt)
        entity[SystemProperty.deleted] = .bool(entity[SystemProperty.deleted] == true)
        return entity
    }

    /// `date` as Datasync writes `updatedAt`: UTC, three fraction digits, `Z`.
    static func millisecondText(_ date: Date) -> String {
        Timestamp(ticks: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) * 10_000).text
    }

    /// `false` when the request's `If-Match` names entity tags, none of them `*` or `existing`'s version. An
    /// `If-Match` that is not a quoted tag counts as absent.
    private static func preconditionHolds(_ request: Request, on existing: [String: JSONValue]) -> Bool {
        guard let header = request.headers[.ifMatch] else { return true }
        let tags = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let quoted = tags.filter { $0 == "*" || ($0.count >= 2 && $0.hasPrefix("\"") && $0.hasSuffix("\"")) }
        guard !quoted.isEmpty else { return true }
        let version = existing[SystemProperty.version]?.stringValue
        return quoted.contains { $0 == "*" || String($0.dropFirst().dropLast()) == version }
    }

    /// The next page's query string as Datasync writes it, or `nil` when the page is the last one: past every
    /// matching record, or past the `$top` asked.
    static func nextLink(query: String, skip: Int, top: Int?, sent: Int, count: Int) -> String? {
        let nextSkip = skip + sent
        let remaining = top.map { $0 - sent }
        if nextSkip >= count { return nil }
        if let remaining, remaining <= 0 { return nil }
        var parts = query.split(separator: "&").map(String.init).filter {
            !$0.hasPrefix("$skip=") && !$0.hasPrefix("$top=")
        }
        if nextSkip > 0 { parts.append("$skip=\(nextSkip)") }
        if let remaining, remaining > 0 { parts.append("$top=\(remaining)") }
        return parts.joined(separator: "&")
    }

    /// The first date-time of `filter` written with a `datetime'`/`datetimeoffset'` prefix (outside string
    /// literals), as the filter holds it; `nil` when it has none.
    static func legacyDateTimeLiteral(in filter: String) -> String? {
        let characters = Array(filter)
        var index = 0
        while index < characters.count {
            guard characters[index] == "'" else {
                index += 1
                continue
            }
            var wordStart = index
            while wordStart > 0, characters[wordStart - 1].isLetter { wordStart -= 1 }
            let prefix = String(characters[wordStart..<index]).lowercased()
            var end = index + 1
            while end < characters.count {
                if characters[end] == "'" {
                    if end + 1 < characters.count, characters[end + 1] == "'" {
                        end += 2
                        continue
                    }
                    break
                }
                end += 1
            }
            if prefix == "datetime" || prefix == "datetimeoffset" {
                return String(characters[wordStart...min(end, characters.count - 1)])
            }
            index = end + 1
        }
        return nil
    }

    /// A `$skip` or `$top` value: absent, a non-negative integer, or anything else.
    private enum QueryNumber {
        case absent
        case valid(Int)
        case invalid
        var value: Int? { if case .valid(let value) = self { value } else { nil } }
    }

    private static func queryNumber(_ text: String?) -> QueryNumber {
        guard let text else { return .absent }
        guard let value = Int(text), value >= 0 else { return .invalid }
        return .valid(value)
    }

    /// `__includedeleted=true`, the name and the value in any case.
    private static func includesDeleted(_ items: [String: String]) -> Bool {
        items.contains { $0.key.lowercased() == "__includedeleted" && $0.value.lowercased() == "true" }
    }

}
