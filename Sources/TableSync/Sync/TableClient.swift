import Foundation
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

    func insert(table: String, record: [String: JSONValue]) async throws -> HTTPResponse {
        try await http.send(HTTPRequest(method: "POST", path: Self.tablePath(table), body: CanonicalJSON.encode(.object(record), style: .compact)))
    }

    /// PATCH in v2 (merge), PUT in v3 (replace), with `If-Match` on `baseVersion`.
    func update(table: String, id: String, record: [String: JSONValue], baseVersion: String?) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        if let baseVersion { headers["If-Match"] = "\"\(baseVersion)\"" }
        return try await http.send(HTTPRequest(method: apiVersion == 2 ? "PATCH" : "PUT", path: Self.recordPath(table, id),
                                               headers: headers, body: CanonicalJSON.encode(.object(record), style: .compact)))
    }

    func delete(table: String, id: String, baseVersion: String?) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        if let baseVersion { headers["If-Match"] = "\"\(baseVersion)\"" }
        return try await http.send(HTTPRequest(method: "DELETE", path: Self.recordPath(table, id), headers: headers))
    }

    /// One page of `GET /tables/{table}`: its checked records, the v3 `nextLink` if any, and the extensions the
    /// server advertised (`nil` when it sent no extensions header: not a TableSync server).
    func list(table: String, query: [(name: String, value: String)]) async throws
        -> (records: [[String: JSONValue]], nextLink: String?, extensions: Set<String>?) {
        let request = HTTPRequest(method: "GET", path: Self.tablePath(table), query: query)
        let response = try await http.send(request)
        let url = http.baseURL + request.pathAndQuery
        switch response.status {
        case 200: break
        case 401, 403:
            throw SyncError.authenticationRefused(status: response.status, message: Self.errorMessage(response))
        default:
            throw SyncError.malformedResponse(url: url, reason: "HTTP \(response.status)\(Self.errorMessage(response).map { ": \($0)" } ?? "")")
        }
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
        return (records, nextLink, Self.extensions(response))
    }

    /// The extension names a response advertises, or `nil` when it has no extensions header.
    static func extensions(_ response: HTTPResponse) -> Set<String>? {
        guard let value = response.header(extensionsHeader) else { return nil }
        return Set(value.split(separator: ",").map { String($0).trimmingWhitespace().lowercased() }.filter { !$0.isEmpty })
    }

    static let extensionsHeader = "X-TableSync-Extensions"

    static func tablePath(_ table: String) -> String { "/tables/" + HTTPRequest.encode(table) }
    static func recordPath(_ table: String, _ id: String) -> String { tablePath(table) + "/" + HTTPRequest.encode(id) }

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
