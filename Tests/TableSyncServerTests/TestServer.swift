import Foundation
import GzipCompression
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// The databases the protocol suite runs on (see ``TestBackend``).
typealias Backend = TestBackend

extension TestBackend: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
}

let testLogger: Logger = {
    var logger = Logger(label: "tablesync-server-tests")
    logger.logLevel = .warning
    return logger
}()

/// Runs `body` against a server on `backend` serving `tables`, through the in-process router or a live socket.
/// `database` replaces the backend's usual one (e.g. the test PostgreSQL reached with other TLS settings).
func withServer<Value: Sendable>(
    _ backend: Backend, tables: [TableOptions], tokens: [StaticToken] = [],
    maxBodySize: Int = ServerConfiguration.defaultMaxBodySize,
    database: DatabaseLocation? = nil, setup: TestingSetup = .router,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: @Sendable (any TestClientProtocol) async throws -> Value
) async throws -> Value {
    let database =
        if let database { database } else if tables.contains(where: { $0.schema != nil }) {
            try await columnsDatabase(backend)
        } else {
            try backend.database()
        }
    defer { TestBackend.removeFiles(of: database) }
    var configuration = ServerConfiguration(
        host: "127.0.0.1", port: 0, database: database, tables: tables,
        tokens: tokens, maxBodySize: maxBodySize)
    configure(&configuration)
    let app = try makeServerApplication(configuration: configuration, logger: testLogger)
    return try await app.test(setup) { client in try await body(client) }
}

/// Runs `body` against a ``LiveServer`` on `backend` (on threads of its own, reached over real sockets) serving
/// `tables`, with the configuration `configure` sets, and stops it afterwards, also when `body` throws.
func withLiveServer(
    _ backend: Backend, tables: [String], database: DatabaseLocation? = nil,
    configure: @escaping (inout ServerConfiguration) -> Void = { _ in }, _ body: (LiveServer) async throws -> Void
) async throws {
    let server = try await LiveServer.start(backend, tables: tables, database: database, configure: configure)
    do {
        try await body(server)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

/// Serves `tables` without columns again, which drops their column indexes: tests share one PostgreSQL database,
/// where indexes left behind would slow every write of every later test.
func forgetDeclaredColumns(_ backend: Backend, tables: [String]) async throws {
    guard backend == .postgres else { return }
    try await withRepository(backend, declaringColumns: true) { repository in
        try await repository.prepare(tables: tables.map { TableOptions(name: $0) })
    }
}

/// A response with its body decoded (gunzipped when sent compressed).
struct Reply: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let bytes: [UInt8]

    var json: JSONValue {
        get throws { try JSONParser.parse(bytes) }
    }

    var errorMessage: String? { (try? json).flatMap(ProtocolErrorBody.message(in:)) }

    subscript(_ name: String) -> String? { headers[HTTPField.Name(name)!] }
}

extension TestClientProtocol {
    /// Sends a request speaking protocol `version` (nil: no version header) with an optional JSON body.
    func send(
        _ method: HTTPRequest.Method, _ uri: String, version: ProtocolVersion? = .v3, json: JSONValue? = nil,
        headers extra: HTTPFields = [:], rawBody: [UInt8]? = nil
    ) async throws -> Reply {
        var headers = extra
        if let version { headers[HTTPField.Name(ProtocolHeader.apiVersion)!] = version.headerValue }
        var body: ByteBuffer?
        if let json {
            body = ByteBuffer(bytes: CanonicalJSON.encode(json, style: .compact))
            headers[.contentType] = "application/json"
        }
        if let rawBody { body = ByteBuffer(bytes: rawBody) }
        return try await execute(uri: uri, method: method, headers: headers, body: body) { response in
            var bytes = Array(response.body.readableBytesView)
            if response.headers[.contentEncoding] == "gzip" { bytes = try Gzip.decompress(bytes, limit: 1 << 30) }
            return Reply(status: response.status, headers: response.headers, bytes: bytes)
        }
    }
}
