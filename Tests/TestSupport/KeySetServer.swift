import Hummingbird
import Logging
import NIOCore
import Synchronization

/// An identity provider's JWKS endpoint on a free loopback port: it serves the key set a test sets, and counts
/// how often it was fetched.
public final class KeySetServer: Sendable {
    /// The key set's URL.
    public let url: String
    private let running: RunningApplication
    private let box: StateBox

    private init(url: String, running: RunningApplication, box: StateBox) {
        self.url = url
        self.running = running
        self.box = box
    }

    /// Starts serving `document`.
    public static func start(serving document: String) async throws -> KeySetServer {
        let box = StateBox(document: document)
        var logger = Logger(label: "key-set-server")
        logger.logLevel = .warning
        let router = Router(context: BasicRequestContext.self)
        router.get("/jwks.json") { _, _ in
            let document = box.fetch()
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: .init(string: document)))
        }
        let running = try await RunningApplication.serving(router, logger: logger)
        return KeySetServer(url: "http://127.0.0.1:\(running.port)/jwks.json", running: running, box: box)
    }

    /// Serves `document` from now on, as a provider publishes a new key.
    public func publish(_ document: String) { box.state.withLock { $0.document = document } }

    /// How often the key set was fetched.
    public var fetches: Int { box.state.withLock { $0.fetches } }

    public func stop() async { await running.stop() }

    /// Shares the state with the route (a `Mutex` cannot be captured by an escaping closure).
    private final class StateBox: Sendable {
        let state: Mutex<(document: String, fetches: Int)>
        init(document: String) { state = Mutex((document: document, fetches: 0)) }
        func fetch() -> String {
            state.withLock { value in
                value.fetches += 1
                return value.document
            }
        }
    }
}
