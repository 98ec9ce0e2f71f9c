import Foundation
import GzipCompression
import HTTPTypes
import Hummingbird
import NIOCore
import SyncProtocol

/// The routes of the table protocol: `GET/POST /tables/{table}` and `GET/PATCH/PUT/DELETE /tables/{table}/{id}`,
/// and the batch extension's `POST /batch` (see `TableRoutes+Batch.swift`).
struct TableRoutes: Sendable {
    let tables: [String: TableOptions]
    let repository: any RecordRepository
    let writer: ResponseWriter
    let maxBodySize: Int
    /// The most bytes the records of one page may take (``ServerConfiguration/maxPageBytes``).
    let maxPageBytes: Int
    /// The most operations one batch may carry; `nil` when the batch extension is switched off.
    let maxBatchOperations: Int?
    let filterLimits: FilterLimits
    /// Where reads past the statement time limit and pages ended by their bytes are counted.
    let metrics: ServerMetrics
    /// Whether the server has static tokens or JWT keys (``Authenticator/checksCredentials``).
    let checksCredentials: Bool
    /// Where bulk reads (``ReadWeight``) take turns.
    let bulkReads: ReadAdmission
    /// How long a read may run (``ServerConfiguration/statementTimeout``), and a bulk read wait for its turn.
    let statementTimeout: Duration

    init(configuration: ServerConfiguration, repository: any RecordRepository, metrics: ServerMetrics) {
        var tables: [String: TableOptions] = [:]
        for table in configuration.tables { tables[table.name.lowercased()] = table }
        self.tables = tables
        self.repository = repository
        self.writer = ResponseWriter(gzipMinimumSize: configuration.gzipMinimumSize)
        self.maxBodySize = configuration.maxBodySize
        self.maxPageBytes = configuration.maxPageBytes
        self.maxBatchOperations = configuration.batch ? configuration.maxBatchOperations : nil
        self.filterLimits = configuration.filterLimits
        self.metrics = metrics
        checksCredentials = configuration.checksCredentials
        self.bulkReads = ReadAdmission(limit: configuration.maxBulkReads, metrics: metrics)
        self.statementTimeout = configuration.statementTimeout
    }

    /// Adds the routes to `router`: `/tables/{table}[/{id}]` behind ``ProtocolVersionMiddleware`` and
    /// ``TableMiddleware``, `POST /batch` behind ``ProtocolVersionMiddleware`` when the extension is on.
    func register(on router: Router<TableRequestContext>) {
        let table = router.group(RouterPath(TablePath.tablesPrefix))
            .add(middleware: ProtocolVersionMiddleware())
            .group(":table")
            .add(middleware: TableMiddleware(tables: tables, writer: writer, checksCredentials: checksCredentials))
        table.get { request, context in try await list(request, context) }
        table.post { request, context in try await insert(request, context) }
        table.get(":id") { request, context in try await read(request, context) }
        table.patch(":id") { request, context in try await update(request, context, merge: true) }
        table.put(":id") { request, context in try await update(request, context, merge: false) }
        table.delete(":id") { request, context in try await delete(request, context) }
        table.post(":id") { request, context in try await undelete(request, context) }
        if let maxBatchOperations {
            router.group(RouterPath(TablePath.batch))
                .add(middleware: ProtocolVersionMiddleware())
                .post { request, context in try await batch(request, context, maxOperations: maxBatchOperations) }
        }
    }

    // MARK: Routes

    private func list(_ request: Request, _ context: TableRequestContext) async throws -> Response {
        let table = try context.servedTable()
        let version = try context.version()
        let wholePages = request.headers[values: HTTPField.Name(ProtocolHeader.extensions)!].contains {
            ProtocolExtension.parse(headerValue: $0).contains(.wholePages)
        }
        let query = try ListQuery.parse(
            context.query, version: version, table: table, filterLimits: filterLimits, wholePages: wholePages)
        let scope = try context.recordScope()
        let read = {
            try await reading(table: table.name, context: context) {
                try await repository.list(
                    in: scope, query: query, into: EncodedPage(select: query.select, maxBytes: maxPageBytes))
            }
        }
        let page =
            ReadWeight.isBulk(query) ? try await bulkReads.run(waitingAtMost: statementTimeout, read) : try await read()
        if page.endedEarly { metrics.pagesEndedEarly.increment() }
        let records = page.collected
        let count = page.totalCount.map { JSONValue.integer(Int64($0)) } ?? .null
        let next = NextPageLink.query(
            of: context.query, skip: query.skip, requestedTop: query.requestedTop, recordsSent: page.recordCount,
            hasMore: page.hasMore)
        switch version {
        case .v2:
            // v2 has no nextLink; a page that ended before $top says where the rest is as Azure's .NET server does
            // when it caps a page, in a Link header (clients that count records ask on with $skip anyway).
            var headers: HTTPFields = [:]
            if page.endedEarly, let next { headers[.link] = "<\(TablePath.table(table.name))?\(next)>; rel=next" }
            let body = query.includeCount ? records.body(member: "results", envelope: ["count": count]) : records.body()
            return writer.json(parts: body, status: .ok, request: request, headers: headers)
        case .v3:
            let body = records.body(
                member: "items", envelope: ["count": count, "nextLink": next.map(JSONValue.string) ?? .null])
            return writer.json(parts: body, status: .ok, request: request)
        }
    }

    private func read(_ request: Request, _ context: TableRequestContext) async throws -> Response {
        let table = try context.servedTable()
        let id = try context.recordID()
        let scope = try context.recordScope()
        guard
            let record = try await reading(
                table: table.name, context: context, { try await repository.record(in: scope, id: id) })
        else {
            throw ProtocolError.notFound("there is no record '\(id)' in table \(table.name)")
        }
        if record.deleted, try !ListQuery.includesDeleted(context.query) {
            throw ProtocolError.deleted(id, version: try context.version())
        }
        switch try Self.preconditions(request).outcome(
            version: record.version, updatedAt: record.updatedAt, isRead: true)
        {
        case .proceed:
            return writer.json(record.json(), status: .ok, request: request, headers: Self.recordHeaders(record))
        case .notModified:
            return Response(status: .notModified, headers: Self.recordHeaders(record))
        case .preconditionFailed(let reason):
            throw ProtocolError.preconditionFailed("the record '\(id)' has changed: \(reason)", record: record)
        }
    }

    private func insert(_ request: Request, _ context: TableRequestContext) async throws -> Response {
        try await run(
            try Self.planInsert(
                table: try context.servedTable(), scope: try context.recordScope(), body: try await readBody(request)),
            request: request)
    }

    private func update(_ request: Request, _ context: TableRequestContext, merge: Bool) async throws -> Response {
        let plan = try Self.planUpdate(
            table: try context.servedTable(), scope: try context.recordScope(), id: try context.recordID(),
            body: try await readBody(request),
            preconditions: try Self.preconditions(request), version: try context.version(), merge: merge,
            includeDeleted: try ListQuery.includesDeleted(context.query))
        return try await run(plan, request: request)
    }

    private func delete(_ request: Request, _ context: TableRequestContext) async throws -> Response {
        let plan = Self.planDelete(
            table: try context.servedTable(), scope: try context.recordScope(), id: try context.recordID(),
            preconditions: try Self.preconditions(request), version: try context.version())
        return try await run(plan, request: request)
    }

    private func undelete(_ request: Request, _ context: TableRequestContext) async throws -> Response {
        let plan = Self.planUndelete(
            scope: try context.recordScope(), id: try context.recordID(),
            preconditions: try Self.preconditions(request))
        return try await run(plan, request: request)
    }

    /// Runs one planned write and answers it: the single-request routes' last step.
    private func run(_ plan: PlannedWrite, request: Request) async throws -> Response {
        let stored: StoredRecord?
        do {
            stored = try await repository.write(plan.write)
        } catch {
            throw ProtocolError.refusal(for: error, during: .write(table: plan.write.table, id: plan.write.id)) ?? error
        }
        let answer = try plan.answer(stored)
        guard let record = answer.record else { return Response(status: answer.status) }
        var headers = Self.recordHeaders(record)
        if let location = answer.location {
            headers[.location] = RecordLocation.url(
                path: location, host: request.head.authority, forwardedProto: request.headers[.forwardedProto])
        }
        return writer.json(record.json(), status: answer.status, request: request, headers: headers)
    }

    // MARK: Writes, as single requests and batch operations both run them

    /// A write ready for the repository, and how to answer once it is stored.
    struct PlannedWrite: Sendable {
        let write: RecordWriteRequest
        /// The record's properties as the request sent them (system properties taken out); `nil` for a delete.
        let sent: [String: JSONValue]?
        /// The answer for the stored row (what ``RecordRepository/write(_:)`` returned).
        let answer: @Sendable (StoredRecord?) throws(ProtocolError) -> WriteAnswer
    }

    /// The successful answer to a write: its status, the record to send (none for a v3 delete) and, for an
    /// insert, its `Location`.
    struct WriteAnswer: Sendable {
        let status: HTTPResponse.Status
        let record: StoredRecord?
        var location: String?
    }

    /// `POST /tables/{table}`: a new record in `scope`; a duplicate id is a 409 with the server's copy. Ids are unique
    /// per scope, so in a per-user table an id another user holds is a new record of this user's.
    static func planInsert(
        table: TableOptions, scope: RecordScope, body: JSONValue
    ) throws(ProtocolError) -> PlannedWrite {
        let incoming = try IncomingRecord(body)
        let id = incoming.id ?? UUID().uuidString.lowercased()
        try OwnerProperty.checkNotSent(incoming.properties, table: table)
        try StorableProperties.check(incoming.properties, table: table.name, id: id)
        let properties = try conforming(incoming.properties, to: table)
        let write = RecordWriteRequest(scope: scope, id: id) { existing in
            if let existing {
                throw ProtocolError.conflict("a record with id '\(id)' already exists", record: existing)
            }
            return .insert(properties)
        }
        return PlannedWrite(write: write, sent: incoming.properties) { stored throws(ProtocolError) in
            guard let stored else {
                throw ProtocolError(status: .internalServerError, message: "the insert stored nothing")
            }
            return WriteAnswer(status: .created, record: stored, location: TablePath.record(table: table.name, id: id))
        }
    }

    /// `PATCH` (`merge`) or `PUT /tables/{table}/{id}` in `scope`, on the conditions `preconditions` set (or, in v2
    /// without `If-Match`, the body's version).
    ///
    /// A `PUT` with `__includeDeleted=true` (`includeDeleted`) also replaces a soft-deleted record, as Datasync's
    /// server does: the record is restored unless the body says `"deleted": true`, in which case it stays deleted
    /// with the new properties. Without it, or with `PATCH`, a deleted record is 404 (v2) or 410 (v3).
    static func planUpdate(
        table: TableOptions, scope: RecordScope, id: String, body: JSONValue, preconditions: RecordPreconditions,
        version: ProtocolVersion, merge: Bool, includeDeleted: Bool
    ) throws(ProtocolError) -> PlannedWrite {
        let incoming = try IncomingRecord(body)
        if let bodyID = incoming.id, bodyID != id {
            throw ProtocolError.badRequest("the body's id '\(bodyID)' differs from the id '\(id)' in the URL")
        }
        let bodyVersion = version == .v2 ? incoming.version : nil
        try OwnerProperty.checkNotSent(incoming.properties, table: table)
        try StorableProperties.check(incoming.properties, table: table.name, id: id)
        let properties = try conforming(incoming.properties, to: table)
        let replacesDeleted = !merge && includeDeleted
        let staysDeleted = incoming.deleted == true
        let write = RecordWriteRequest(scope: scope, id: id) { existing in
            let current = try Self.checkWritable(
                existing, id: id, version: version, preconditions: preconditions, includingDeleted: replacesDeleted)
            if preconditions.ifMatch == nil, let bodyVersion, bodyVersion != current.version {
                throw ProtocolError.conflict(
                    "the record '\(id)' has changed since version \(bodyVersion)", record: current)
            }
            if current.deleted { return staysDeleted ? .update(properties) : .restore(properties) }
            guard merge else { return .update(properties) }
            return .update(current.properties.merging(properties) { _, new in new })
        }
        return PlannedWrite(write: write, sent: incoming.properties) { stored throws(ProtocolError) in
            guard let stored else {
                throw ProtocolError(status: .internalServerError, message: "the update stored nothing")
            }
            return WriteAnswer(status: .ok, record: stored)
        }
    }

    /// `DELETE /tables/{table}/{id}` in `scope`: v2 answers 200 with the deleted record, v3 204.
    static func planDelete(
        table: TableOptions, scope: RecordScope, id: String, preconditions: RecordPreconditions,
        version: ProtocolVersion
    ) -> PlannedWrite {
        let softDelete = table.softDelete
        let write = RecordWriteRequest(scope: scope, id: id) { existing in
            _ = try Self.checkWritable(
                existing, id: id, version: version, preconditions: preconditions, includingDeleted: false)
            return softDelete ? .softDelete : .hardDelete
        }
        return PlannedWrite(write: write, sent: nil) { removed throws(ProtocolError) in
            switch version {
            case .v3:
                return WriteAnswer(status: .noContent, record: nil)
            case .v2:
                guard let removed else {
                    throw ProtocolError(status: .internalServerError, message: "the delete returned nothing")
                }
                return WriteAnswer(status: .ok, record: removed)
            }
        }
    }

    /// `POST /tables/{table}/{id}`: brings a soft-deleted record back, as azure-mobile-apps-node does, on the
    /// conditions `preconditions` set (on the deleted record); 200 with the record. A record that is not deleted is a
    /// 409 with its copy; one the table never kept deleted is not found. `scope` holds the record.
    static func planUndelete(scope: RecordScope, id: String, preconditions: RecordPreconditions) -> PlannedWrite {
        let write = RecordWriteRequest(scope: scope, id: id) { existing in
            guard let existing else { throw ProtocolError.notFound("there is no record '\(id)'") }
            try preconditions.check(existing, id: id)
            guard existing.deleted else {
                throw ProtocolError.conflict("the record '\(id)' is not deleted", record: existing)
            }
            return .undelete
        }
        return PlannedWrite(write: write, sent: nil) { stored throws(ProtocolError) in
            guard let stored else {
                throw ProtocolError(status: .internalServerError, message: "the undelete stored nothing")
            }
            return WriteAnswer(status: .ok, record: stored)
        }
    }

    // MARK: Shared steps

    /// Runs a read of `table`. A read the statement time limit ended is counted and logged with the request's id;
    /// one cancelled because its client went away or the server is stopping is not a timeout.
    private func reading<Value>(
        table: String, context: TableRequestContext, _ read: () async throws -> Value
    ) async throws -> Value {
        do {
            return try await read()
        } catch {
            if !Task.isCancelled, DatabaseFailure(error) == .timedOut {
                metrics.statementTimeouts.increment()
                context.logger.warning(
                    "a read ran past the statement time limit",
                    metadata: [
                        "table": "\(table)", "path": "\(context.endpointPath ?? "")", "error": "\(error)"
                    ])
            }
            throw error
        }
    }

    /// `properties` as `table` stores them: as sent for a schemaless table; checked against its declared columns
    /// (400 naming the property) and with dates in canonical form otherwise. A merge checks only the properties
    /// sent: the record's others were checked when they were written.
    static func conforming(
        _ properties: [String: JSONValue], to table: TableOptions
    ) throws(ProtocolError) -> [String: JSONValue] {
        guard let schema = table.schema else { return properties }
        do {
            return try schema.validate(properties)
        } catch {
            throw ProtocolError.badRequest("table \(table.name): \(error)")
        }
    }

    /// The existing record that `preconditions` accept, not deleted unless `includingDeleted`; otherwise the
    /// protocol's refusal.
    private static func checkWritable(
        _ existing: StoredRecord?, id: String, version: ProtocolVersion, preconditions: RecordPreconditions,
        includingDeleted: Bool
    ) throws(ProtocolError) -> StoredRecord {
        guard let existing else { throw ProtocolError.notFound("there is no record '\(id)'") }
        if existing.deleted && !includingDeleted { throw ProtocolError.deleted(id, version: version) }
        try preconditions.check(existing, id: id)
        return existing
    }

    /// The headers that make a request on a record conditional (``RecordPreconditions``).
    static func preconditions(_ request: Request) throws(ProtocolError) -> RecordPreconditions {
        try RecordPreconditions(headers: request.headers)
    }

    /// The headers of an answer that carries `record`: its `ETag` and `Last-Modified`.
    static func recordHeaders(_ record: StoredRecord) -> HTTPFields {
        [.eTag: ResponseWriter.eTag(record.version), .lastModified: HTTPDate.format(ticks: record.updatedAt)]
    }

    func readBody(_ request: Request) async throws -> JSONValue {
        let contentType = request.headers[.contentType]
        guard RequestContentType.isJSON(contentType) else {
            throw ProtocolError(
                status: .unsupportedMediaType,
                message: "Content-Type '\(contentType ?? "")' is not supported; send the body as application/json")
        }
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maxBodySize)
        } catch let error as HTTPResponseError where error.status == .contentTooLarge {
            throw ProtocolError.payloadTooLarge(limit: maxBodySize)
        }
        var bytes = Array(buffer.readableBytesView)
        switch request.headers[.contentEncoding]?.lowercased().trimmingCharacters(in: " ") {
        case nil, "", "identity":
            break
        case "gzip", "x-gzip":
            do {
                bytes = try Gzip.decompress(bytes, limit: maxBodySize)
            } catch .tooLarge {
                throw ProtocolError.payloadTooLarge(limit: maxBodySize)
            } catch {
                throw ProtocolError.badRequest("the gzip request body cannot be decompressed: \(error)")
            }
        case let other?:
            throw ProtocolError(
                status: .unsupportedMediaType,
                message: "Content-Encoding '\(other)' is not supported; send gzip or identity")
        }
        guard !bytes.isEmpty else { throw ProtocolError.badRequest("the request body is empty; send a JSON object") }
        do {
            return try JSONParser.parse(bytes)
        } catch let error as JSONParseError {
            throw ProtocolError.badRequest("the request body is not valid JSON: \(error)")
        }
    }
}
