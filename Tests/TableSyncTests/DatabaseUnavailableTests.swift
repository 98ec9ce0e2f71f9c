import Foundation
import Synchronization
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync

/// A server that answers but cannot reach its database (503 with the code `databaseUnavailable`): the client
/// retries as for any 503, then stops the run saying so, and a write keeps its operation in the journal rather than
/// setting it aside as a refusal, whether it went alone or in a batch.
@Suite("Database unavailable on the server")
struct DatabaseUnavailableTests {
    /// A server whose `/health` answers and whose every other request is that 503, counting the requests.
    private final class DatabaseAway: HTTPTransport {
        let batch: Bool
        private let log = Mutex<[String]>([])
        var requests: [String] { log.withLock { $0 } }

        init(batch: Bool) { self.batch = batch }

        func exchange(_ request: TransportRequest) async throws -> TransportAnswer {
            let path = String(request.url.dropFirst(DatabaseUnavailableTests.remote.count).prefix { $0 != "?" })
            log.withLock { $0.append("\(request.method) \(path)") }
            let json = ["content-type": "application/json"]
            if path == TablePath.health {
                let extensions = batch ? ["batch"] : []
                let health: JSONValue = [
                    "status": "ok", "versions": ["2.0.0", "3.0.0"], "extensions": .array(extensions.map { .string($0) })
                ]
                return TransportAnswer(
                    status: 200,
                    headers: json.merging([ProtocolHeader.extensions.lowercased(): extensions.joined()]) {
                        $1
                    }, body: CanonicalJSON.encode(health, style: .compact))
            }
            let body = ProtocolErrorBody.make(
                "the server's PostgreSQL database \"sync\" is unavailable; retry later", code: .databaseUnavailable)
            return TransportAnswer(
                status: 503, headers: json.merging(["retry-after": "0"]) { $1 },
                body: CanonicalJSON.encode(body, style: .compact))
        }
    }

    static let remote = "http://sync.invalid"

    @Test("a write meeting it is retried, then stops the push; the operation stays pending", arguments: [false, true])
    func writeKeepsItsOperation(batch: Bool) async throws {
        let directory = TemporaryDirectory()
        let context = try SyncContext.initialize(
            directory: directory.file("store"), settings: StoreSettings(remote: Self.remote, tables: ["todo"]))
        try await context.table("todo").insert(["id": "a", "text": "milk"])
        let transport = DatabaseAway(batch: batch)
        let options = SyncOptions(retryPolicy: RetryPolicy(maximumAttempts: 3, baseDelay: 0)).with {
            $0.environment = [:]
            $0.transport = transport
        }
        await #expect { try await context.push(options: options) } throws: { error in
            guard let error = error as? SyncError, case .databaseUnavailable(let url) = error else { return false }
            return url == Self.remote && error.kind == .unreachable
                && error.description.contains("answered, but its database is unavailable")
        }
        #expect(await context.pendingOperations.map(\.id) == ["a"])
        #expect(try await context.conflicts().isEmpty, "not set aside as refused")
        let writes = transport.requests.filter { !$0.hasPrefix("GET") }
        #expect(
            writes == Array(repeating: batch ? "POST /batch" : "POST /tables/todo", count: 3),
            "three attempts, as for any 503: \(transport.requests)")
    }
}
