import Foundation
import GzipCompression
import Logging
import SyncProtocol
import TableSyncStorage

/// The table protocol as a client speaks it: builds each request and reads list responses in both shapes.
struct TableClient: Sendable {
    let http: ServerHTTPClient
    /// 2 or 3.
    let apiVersion: Int

    /// The client for a store's settings speaking protocol `apiVersion`; the token comes from `TABLESYNC_TOKEN` or
    /// the settings' token file.
    static func make(
        settings: StoreSettings, apiVersion: Int, credentials: ClientCredentials? = nil, timeout: Double = 30,
        retryPolicy: RetryPolicy = RetryPolicy(), transport: any HTTPTransport = PlatformTransport.shared,
        logger: Logger = SyncOptions.silentLogger
    ) -> TableClient {
        TableClient(
            http: ServerHTTPClient(
                baseURL: settings.remote, defaultHeaders: ["Accept": "application/json"], credentials: credentials,
                timeout: timeout, retryPolicy: retryPolicy, transport: transport, logger: logger),
            apiVersion: apiVersion)
    }

    /// A client for `http` speaking protocol `apiVersion` (2 or 3): it sends `ZUMO-API-VERSION` with every request.
    init(http: ServerHTTPClient, apiVersion: Int) {
        var headers = http.defaultHeaders
        headers[ProtocolHeader.apiVersion] = Self.versionHeaderValue(apiVersion)
        self.http = ServerHTTPClient(
            baseURL: http.baseURL, defaultHeaders: headers, credentials: http.credentials, timeout: http.timeout,
            retryPolicy: http.retryPolicy, maxResponseBytes: http.maxResponseBytes, transport: http.transport,
            logger: http.logger)
        self.apiVersion = apiVersion
    }

    /// The same client speaking protocol `apiVersion` instead.
    func speaking(_ apiVersion: Int) -> TableClient { TableClient(http: http, apiVersion: apiVersion) }

    /// `ZUMO-API-VERSION` for protocol `apiVersion`.
    static func versionHeaderValue(_ apiVersion: Int) -> String {
        (apiVersion == 2 ? ProtocolVersion.v2 : ProtocolVersion.v3).headerValue
    }

    /// `POST` of a record's compact JSON `body`. Writes return an answer of 500 or above that outlasted the retries
    /// rather than throw (``ServerHTTPClient/send(_:returningServerFaults:)``): the push sets such a record aside.
    func insert(table: String, body: [UInt8]) async throws -> HTTPResponse {
        try await http.send(
            HTTPRequest(method: "POST", path: TablePath.table(table), body: body), returningServerFaults: true)
    }

    /// PATCH in v2 (merge), PUT in v3 (replace) of a record's compact JSON `body`, with `If-Match` on `baseVersion`.
    func update(table: String, id: String, body: [UInt8], baseVersion: String?) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        if let baseVersion { headers["If-Match"] = "\"\(baseVersion)\"" }
        return try await http.send(
            HTTPRequest(
                method: apiVersion == 2 ? "PATCH" : "PUT", path: TablePath.record(table: table, id: id),
                headers: headers, body: body), returningServerFaults: true)
    }

    /// `POST /tables/{table}/{id}`: brings a soft-deleted record back, with `If-Match` on the deleted record's
    /// `baseVersion` (azure-mobile-apps-node's undelete, which tablesync-server offers too).
    func undelete(table: String, id: String, baseVersion: String?) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        if let baseVersion { headers["If-Match"] = "\"\(baseVersion)\"" }
        return try await http.send(
            HTTPRequest(method: "POST", path: TablePath.record(table: table, id: id), headers: headers))
    }

    func delete(table: String, id: String, baseVersion: String?) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        if let baseVersion { headers["If-Match"] = "\"\(baseVersion)\"" }
        return try await http.send(
            HTTPRequest(method: "DELETE", path: TablePath.record(table: table, id: id), headers: headers),
            returningServerFaults: true)
    }

    /// One page of `GET /tables/{table}`, asking for whole pages (``ProtocolExtension/wholePages``), checked record by
    /// record (``ServerPage``). Throws ``ListRefused`` when
    /// the server refuses the request (other than 401/403), ``SyncError`` when the answer is not a page at all.
    func list(table: String, query: [(name: String, value: String)]) async throws -> ServerPage {
        // A TableSync server then serves the page size asked for in one page; other servers ignore the header.
        let request = HTTPRequest(
            method: "GET", path: TablePath.table(table), query: query,
            headers: [ProtocolHeader.extensions: ProtocolExtension.wholePages.rawValue])
        let response = try await http.send(request)
        let url = http.baseURL + request.pathAndQuery
        switch response.status {
        case 200: break
        case 401, 403:
            throw SyncError.authenticationRefused(status: response.status, message: Self.errorMessage(response))
        default:
            throw ListRefused(
                url: url, status: response.status, message: Self.errorMessage(response),
                maxTop: response.header(ProtocolHeader.maxTop).flatMap { Int($0) })
        }
        let body: JSONValue
        do {
            body = try JSONParser.parse(response.body)
        } catch let error as JSONParseError {
            throw SyncError.malformedResponse(url: url, reason: "invalid JSON at \(error)")
        }
        let items: [JSONValue]
        var nextLink: String?
        var count: Int?
        switch body {
        case .array(let elements): items = elements
        case .object(let members):
            guard let elements = (members["items"] ?? members["results"])?.arrayValue else {
                throw SyncError.malformedResponse(url: url, reason: "expected an array or an object with \"items\"")
            }
            items = elements
            nextLink = members["nextLink"]?.stringValue
            count = members["count"]?.integerValue.flatMap { Int(exactly: $0) }
        default:
            throw SyncError.malformedResponse(
                url: url, reason: "expected an array or an object with \"items\", found \(body.typeName)")
        }
        return ServerPage(items: items, nextLink: nextLink, totalCount: count)
    }

    /// The server's copy of record `id` of `table`, deleted or not (`GET /tables/{table}/{id}?__includeDeleted=true`);
    /// `nil` when the server has no such record (404 or 410). Throws when the server refuses the read or answers
    /// something that is not a record.
    func serverCopy(table: String, id: String) async throws -> ServerRecord? {
        let request = HTTPRequest(
            method: "GET", path: TablePath.record(table: table, id: id), query: [(QueryOption.includeDeleted, "true")])
        let response = try await http.send(request)
        let url = http.baseURL + request.pathAndQuery
        if response.status == 404 || response.status == 410 { return try await deletedCopy(table: table, id: id) }
        try Self.requireOK(response, url: url)
        do {
            return try ServerRecord(validating: try JSONParser.parse(response.body), requireUpdatedAt: false)
        } catch let error as ServerRecord.Problem {
            throw SyncError.malformedResponse(url: url, reason: error.reason)
        } catch {
            throw SyncError.malformedResponse(url: url, reason: "invalid JSON at \(error)")
        }
    }

    /// The record as a list of deleted records holds it (`$filter=id eq '…'&__includeDeleted=true`), for a server
    /// whose read by id answers 404 for a deleted record even with `__includeDeleted` (azure-mobile-apps-node 4.0.1):
    /// keeping the local side of a record it deleted needs the deleted copy's version. `nil` when the list has none
    /// or the server refuses the list.
    private func deletedCopy(table: String, id: String) async throws -> ServerRecord? {
        let filter = FilterPrinter.print(.binary(.eq, .property(SystemProperty.id), .literal(.string(id))))
        let query = [(QueryOption.filter, filter), (QueryOption.includeDeleted, "true"), (QueryOption.top, "1")]
        guard let page = try? await list(table: table, query: query) else { return nil }
        return page.records.first { $0.id == id }
    }

    /// What the server offers beyond the table protocol, learned with one `GET /health`. A server that does not
    /// advertise extensions there (an Azure Mobile Apps or Datasync server: 404, no header) offers none.
    func serverFeatures() async throws -> ServerFeatures {
        let response = try await http.send(HTTPRequest(method: "GET", path: TablePath.health))
        switch response.status {
        case 401, 403:
            throw SyncError.authenticationRefused(status: response.status, message: Self.errorMessage(response))
        default:
            break
        }
        guard let value = response.header(ProtocolHeader.extensions) else { return ServerFeatures() }
        let document = response.status == 200 ? try? JSONParser.parse(response.body) : nil
        let extensions = ProtocolExtension.parse(headerValue: value)
        return ServerFeatures(
            isTableSyncServer: true, extensions: extensions,
            batchLimits: document.flatMap(BatchLimits.parse(healthDocument:)),
            changeFeed: extensions.contains(.changes) ? document.flatMap(ChangeFeedLimits.parse(healthDocument:)) : nil)
    }

    /// Sends one `POST /batch` of operations already encoded as batch members (in order), gzip-compressed at
    /// `gzipLevel` when given, and returns the results with the bytes the bodies took on the wire. Throws
    /// ``SyncError`` when the batch as a whole is refused.
    func batch(
        encodedOperations: [[UInt8]], minimalAnswers: Bool, gzipLevel: Int32?
    ) async throws -> (response: BatchResponse, traffic: WireTraffic) {
        var body = BatchRequest.encodeBody(encodedOperations: encodedOperations, minimalAnswers: minimalAnswers)
        var headers = ["Accept-Encoding": "gzip"]
        if let gzipLevel {
            body = try Gzip.compress(body, level: gzipLevel)
            headers["Content-Encoding"] = "gzip"
        }
        let response = try await http.send(
            HTTPRequest(method: "POST", path: TablePath.batch, headers: headers, body: body),
            returningServerFaults: true)
        let url = http.baseURL + TablePath.batch
        // Refused as a whole (too large after all, or a fault of the server's): the operations go again one by one.
        if response.status == 413 || response.status >= 500 {
            throw BatchRefused(status: response.status, message: Self.errorMessage(response))
        }
        try Self.requireOK(response, url: url)
        do {
            let parsed = try BatchResponse.parse(
                try JSONParser.parse(response.body), expectedCount: encodedOperations.count)
            return (parsed, WireTraffic(requests: 1, bytesSent: body.count, bytesReceived: response.wireBodySize))
        } catch let error as BatchEnvelopeError {
            throw SyncError.malformedResponse(url: url, reason: error.message)
        } catch let error as JSONParseError {
            throw SyncError.malformedResponse(url: url, reason: "invalid JSON at \(error)")
        }
    }

    /// Throws unless `response` is a 200: ``SyncError/authenticationRefused(status:message:)`` for 401/403,
    /// ``SyncError/requestRefused(url:status:reason:)`` with the server's message otherwise.
    static func requireOK(_ response: HTTPResponse, url: String) throws {
        switch response.status {
        case 200: return
        case 401, 403:
            throw SyncError.authenticationRefused(status: response.status, message: errorMessage(response))
        default:
            throw SyncError.requestRefused(url: url, status: response.status, reason: errorMessage(response) ?? "")
        }
    }

    static func errorMessage(_ response: HTTPResponse) -> String? {
        (try? JSONParser.parse(response.body))?["error"]?.stringValue.map(ServerText.oneLine)
    }
}

/// The server refused a batch as a whole with 413 or a status of 500 or above (after the retries): its operations
/// are sent again one request each, where a record the server cannot take is set aside alone.
struct BatchRefused: Error, Equatable {
    let status: Int
    let message: String?
}

// MARK: - Telling a refusal of the request from a refusal of a record

extension TableClient {
    /// A read of one record of `table` (`GET /tables/{table}?$top=1`): the cheapest request that every server
    /// answers when it serves the table and accepts the client's protocol version and credentials.
    func probe(table: String) async throws -> HTTPResponse {
        try await http.send(HTTPRequest(method: "GET", path: TablePath.table(table), query: [("$top", "1")]))
    }

    /// Why the server refuses requests on `table` as a whole, or `nil` when it answers a read of it (so a
    /// refusal of an operation or page concerned that record or that query).
    ///
    /// A 4xx to one operation usually concerns the record: a conflict, a property the table does not declare.
    /// But a server that refuses the protocol version (azure-mobile-apps-node answers 400 to
    /// `ZUMO-API-VERSION: 3.0.0` on every request), does not serve the table (404), or refuses everything for
    /// another reason would refuse every operation alike; filing each as a conflict would flood `conflicts/`.
    /// A 400 is tried once more in the other protocol version, to name the fix.
    func requestRefusal(table: String) async throws -> SyncError? {
        let response = try await probe(table: table)
        if (200...299).contains(response.status) { return nil }
        let url = http.baseURL + TablePath.table(table)
        let message = Self.errorMessage(response)
        switch response.status {
        case 401, 403:
            throw SyncError.authenticationRefused(status: response.status, message: message)
        case 400:
            if let other = try await otherVersionAnswered(table: table) {
                return .protocolVersionRefused(
                    url: http.baseURL, refused: apiVersion, accepted: other, learnedForNextRun: false)
            }
        case 404:
            return .requestRefused(
                url: url, status: 404,
                reason: "the server does not serve table \(table)\(message.map { " (\($0))" } ?? "")")
        default:
            break
        }
        return .requestRefused(url: url, status: response.status, reason: message ?? "")
    }

    /// The protocol version the server speaks, learned from reads of `table`: this client's version when the
    /// server answers it, the other one when the server refuses this one with 400 but answers the other, and
    /// `nil` when reads do not tell (the table is not served, or both versions are refused).
    func spokenVersion(table: String) async throws -> Int? {
        let response = try await probe(table: table)
        switch response.status {
        case 200...299:
            return apiVersion
        case 401, 403:
            throw SyncError.authenticationRefused(status: response.status, message: Self.errorMessage(response))
        case 400:
            return try await otherVersionAnswered(table: table)
        default:
            return nil
        }
    }

    /// The other protocol version, when the server answers a read of `table` in it.
    private func otherVersionAnswered(table: String) async throws -> Int? {
        let other = apiVersion == 2 ? 3 : 2
        return (200...299).contains(try await speaking(other).probe(table: table).status) ? other : nil
    }
}
