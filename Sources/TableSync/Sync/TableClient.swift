import Foundation
import GzipCompression
import SyncProtocol

/// The table protocol as a client speaks it: builds each request and reads list responses in both shapes.
struct TableClient: Sendable {
    let http: HTTPClient
    /// 2 or 3.
    let apiVersion: Int

    /// The client for a store's settings; the token comes from `TABLESYNC_TOKEN` or the settings' token file.
    static func make(settings: StoreSettings, environment: [String: String] = ProcessInfo.processInfo.environment,
                     timeout: Double = 30, retryPolicy: RetryPolicy = RetryPolicy()) throws -> TableClient {
        var headers = ["ZUMO-API-VERSION": settings.apiVersion == 2 ? "2.0.0" : "3.0.0", "Accept": "application/json"]
        if let token = try ClientToken.read(settings: settings, environment: environment) {
            headers["Authorization"] = "Bearer " + token
            headers["X-ZUMO-AUTH"] = token
        }
        return TableClient(http: HTTPClient(baseURL: settings.remote, defaultHeaders: headers, timeout: timeout, retryPolicy: retryPolicy),
                           apiVersion: settings.apiVersion)
    }

    /// `POST` of a record's compact JSON `body`.
    func insert(table: String, body: [UInt8]) async throws -> HTTPResponse {
        try await http.send(HTTPRequest(method: "POST", path: TablePath.table(table), body: body))
    }

    /// PATCH in v2 (merge), PUT in v3 (replace) of a record's compact JSON `body`, with `If-Match` on `baseVersion`.
    func update(table: String, id: String, body: [UInt8], baseVersion: String?) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        if let baseVersion { headers["If-Match"] = "\"\(baseVersion)\"" }
        return try await http.send(HTTPRequest(method: apiVersion == 2 ? "PATCH" : "PUT", path: TablePath.record(table: table, id: id),
                                               headers: headers, body: body))
    }

    func delete(table: String, id: String, baseVersion: String?) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        if let baseVersion { headers["If-Match"] = "\"\(baseVersion)\"" }
        return try await http.send(HTTPRequest(method: "DELETE", path: TablePath.record(table: table, id: id), headers: headers))
    }

    /// One page of `GET /tables/{table}`: its checked records and the v3 `nextLink` if any.
    func list(table: String, query: [(name: String, value: String)]) async throws
        -> (records: [[String: JSONValue]], nextLink: String?) {
        let request = HTTPRequest(method: "GET", path: TablePath.table(table), query: query)
        let response = try await http.send(request)
        let url = http.baseURL + request.pathAndQuery
        try Self.requireOK(response, url: url)
        let body: JSONValue
        do {
            body = try JSONParser.parse(response.body)
        } catch let error as JSONParseError {
            throw SyncError.malformedResponse(url: url, reason: "invalid JSON at \(error)")
        }
        let items: [JSONValue]
        var nextLink: String?
        switch body {
        case .array(let elements): items = elements
        case .object(let members):
            guard let elements = (members["items"] ?? members["results"])?.arrayValue else {
                throw SyncError.malformedResponse(url: url, reason: "expected an array or an object with \"items\"")
            }
            items = elements
            nextLink = members["nextLink"]?.stringValue
        default:
            throw SyncError.malformedResponse(url: url, reason: "expected an array or an object with \"items\", found \(body.typeName)")
        }
        var records: [[String: JSONValue]] = []
        records.reserveCapacity(items.count)
        for item in items {
            do {
                records.append(try ServerRecord.check(item, requireUpdatedAt: true))
            } catch {
                throw SyncError.malformedResponse(url: url, reason: error.reason)
            }
        }
        return (records, nextLink)
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
        let limits = response.status == 200 ? (try? JSONParser.parse(response.body)).flatMap(BatchLimits.parse(healthDocument:)) : nil
        return ServerFeatures(isTableSyncServer: true, extensions: ProtocolExtension.parse(headerValue: value), batchLimits: limits)
    }

    /// Sends one `POST /batch` of operations already encoded as batch members (in order), gzip-compressed at
    /// `gzipLevel` when given, and returns the results with the bytes the bodies took on the wire. Throws
    /// ``SyncError`` when the batch as a whole is refused.
    func batch(encodedOperations: [[UInt8]], minimalAnswers: Bool, gzipLevel: Int32?) async throws -> (response: BatchResponse, traffic: WireTraffic) {
        var body = BatchRequest.encodeBody(encodedOperations: encodedOperations, minimalAnswers: minimalAnswers)
        var headers = ["Accept-Encoding": "gzip"]
        if let gzipLevel {
            body = try Gzip.compress(body, level: gzipLevel)
            headers["Content-Encoding"] = "gzip"
        }
        let response = try await http.send(HTTPRequest(method: "POST", path: TablePath.batch, headers: headers, body: body))
        let url = http.baseURL + TablePath.batch
        try Self.requireOK(response, url: url)
        do {
            let parsed = try BatchResponse.parse(try JSONParser.parse(response.body), expectedCount: encodedOperations.count)
            return (parsed, WireTraffic(requests: 1, bytesSent: body.count, bytesReceived: response.wireBodySize))
        } catch let error as BatchEnvelopeError {
            throw SyncError.malformedResponse(url: url, reason: error.message)
        } catch let error as JSONParseError {
            throw SyncError.malformedResponse(url: url, reason: "invalid JSON at \(error)")
        }
    }

    /// Throws unless `response` is a 200: ``SyncError/authenticationRefused(status:message:)`` for 401/403,
    /// ``SyncError/malformedResponse(url:reason:)`` with the server's message otherwise.
    static func requireOK(_ response: HTTPResponse, url: String) throws {
        switch response.status {
        case 200: return
        case 401, 403:
            throw SyncError.authenticationRefused(status: response.status, message: errorMessage(response))
        default:
            throw SyncError.malformedResponse(url: url, reason: "HTTP \(response.status)\(errorMessage(response).map { ": \($0)" } ?? "")")
        }
    }

    static func errorMessage(_ response: HTTPResponse) -> String? {
        (try? JSONParser.parse(response.body))?["error"]?.stringValue
    }
}

/// The client's token: `TABLESYNC_TOKEN`, else the file named by `tokenFile` in `tablesync.json`. Never
/// stored in the store, never logged.
enum ClientToken {
    static let environmentVariable = "TABLESYNC_TOKEN"

    static func read(settings: StoreSettings, environment: [String: String]) throws -> String? {
        if let token = environment[environmentVariable], !token.isEmpty { return token }
        guard let path = settings.tokenFile else { return nil }
        do {
            let token = String(decoding: try FileSystem.readFile(path), as: UTF8.self).trimmingWhitespace()
            return token.isEmpty ? nil : token
        } catch let error as FileSystemError {
            throw SyncError.tokenUnavailable(path: path, reason: "\(error)")
        }
    }
}
