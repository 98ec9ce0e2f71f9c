import SyncProtocol
import Synchronization
import TableSyncStorage

/// How a push or pull reaches the server: a ``TableClient`` for the store's settings and this run's options,
/// speaking the protocol version that `tablesync.json` pins or, when it pins none, the one the server speaks.
///
/// A store without `"apiVersion"` learns the version at its first contact: one read of a table in version 3, and
/// when the server refuses it with 400 (azure-mobile-apps-node refuses `ZUMO-API-VERSION: 3.0.0` on every
/// request), one in version 2. What it learns is kept in `.tablesync/protocol.json`, so later runs ask nothing.
struct ServerConnection: Sendable {
    let settings: StoreSettings
    let layout: StoreLayout
    let options: SyncOptions
    /// What the server offers, asked once for every push and pull that share this connection.
    private let features = ServerFeaturesCache()
    /// The client's token, read once for every request that shares this connection, and again after a 401.
    let credentials: ClientCredentials

    init(settings: StoreSettings, layout: StoreLayout, options: SyncOptions) {
        self.settings = settings
        self.layout = layout
        self.options = options
        credentials = ClientCredentials(settings: settings, environment: options.environment)
    }

    /// What the server offers (`GET /health`), asked once per connection: a sync's push and each of its pulls
    /// share the answer, and ``preparing(_:)`` can ask while the sync scans the store.
    func serverFeatures(client: TableClient) async throws -> ServerFeatures {
        try await features.value { try await client.serverFeatures() }
    }

    /// Runs `body` while what every exchange with the server needs (the transport, the connection, the server's
    /// features) is started beside it, so that it overlaps the store's scan; a failure there is met again, and
    /// reported, by the first exchange that needs it.
    ///
    /// Returns, or throws, only once that start has ended (cancelled when `body` did not wait for it): nothing of a
    /// run may still be running when the process exits, or the exit's cleanup of libcurl's and OpenSSL's global
    /// state runs under a thread that is setting it up (a sync with nothing to send or pull crashed that way).
    func preparing<Result: Sendable>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Result
    ) async throws -> Result {
        let connection = self
        let start = Task { _ = try? await connection.serverFeatures(client: connection.client(table: nil)) }
        do {
            let result = try await body()
            start.cancel()
            await start.value
            return result
        } catch {
            start.cancel()
            await start.value
            throw error
        }
    }

    /// The client to speak to the server with; `table` is the table a first contact reads to learn the version.
    func client(table: String?) async throws -> TableClient {
        let make = { (version: Int) in
            TableClient.make(
                settings: settings, apiVersion: version, credentials: credentials, timeout: options.timeout,
                retryPolicy: options.retryPolicy, transport: options.transport ?? PlatformTransport.shared,
                logger: options.logger)
        }
        if let pinned = settings.apiVersion { return make(pinned) }
        if let learned = LearnedProtocolVersion.load(layout: layout, remote: settings.remote) { return make(learned) }
        let client = make(3)
        guard let table, let version = try await client.spokenVersion(table: table) else { return client }
        try LearnedProtocolVersion.save(version, layout: layout, remote: settings.remote)
        return client.speaking(version)
    }

    /// The error that stops a push or pull when the server refused something of `table` that was not about a
    /// record (``TableClient/requestRefusal(table:)``), or `nil` when the server answers reads of the table. A
    /// store that pins no version and finds the server speaking the other one learns it for the next run.
    func requestRefusal(_ client: TableClient, table: String) async throws -> SyncError? {
        let refusal = try await client.requestRefusal(table: table)
        if case .protocolVersionRefused(let url, let refused, let accepted, _)? = refusal, settings.apiVersion == nil {
            try LearnedProtocolVersion.save(accepted, layout: layout, remote: settings.remote)
            return .protocolVersionRefused(url: url, refused: refused, accepted: accepted, learnedForNextRun: true)
        }
        return refusal
    }
}

/// The server's features once asked, shared by copies of a ``ServerConnection``. A failed ask is not kept: the
/// next caller asks again.
private final class ServerFeaturesCache: Sendable {
    private let asked = Mutex<Task<ServerFeatures, any Error>?>(nil)

    func value(_ ask: @escaping @Sendable () async throws -> ServerFeatures) async throws -> ServerFeatures {
        let task = asked.withLock { asked in
            if let asked { return asked }
            let task = Task { try await ask() }
            asked = task
            return task
        }
        do {
            // A waiter that gives up cancels the ask: it is shared only within one run, whose waiters give up together.
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        } catch {
            asked.withLock { if $0 == task { $0 = nil } }
            throw error
        }
    }
}

/// The protocol version learned from the server, in `.tablesync/protocol.json`: machine-local like the rest of
/// the cache, and tied to the remote it was learned from.
enum LearnedProtocolVersion {
    /// The version learned from `remote`, if any (an unreadable file counts as none: it is learned again).
    static func load(layout: StoreLayout, remote: String) -> Int? {
        guard let bytes = try? FileSystem.readFile(layout.learnedProtocolFile),
            case .object(let members)? = try? JSONParser.parse(bytes),
            members["remote"]?.stringValue == remote,
            case .integer(let version)? = members["apiVersion"], version == 2 || version == 3
        else { return nil }
        return Int(version)
    }

    /// Remembers that `remote` speaks `version`.
    static func save(_ version: Int, layout: StoreLayout, remote: String) throws {
        var batch = DurableFileBatch()
        batch.write(
            CanonicalJSON.encode(["apiVersion": .integer(Int64(version)), "remote": .string(remote)]),
            to: layout.learnedProtocolFile)
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
    }
}
