import CoreMetrics
import PostgresNIO

/// Leases connections of the PostgreSQL pool and counts them: PostgresNIO's pool does not tell how many of its
/// connections are in use or how many requests wait for one, so the server counts its own leases.
struct PostgresPoolUse: Sendable {
    let client: PostgresClient
    /// Connections leased now.
    let inUse: CoreMetrics.Meter?
    /// Leases waiting for a connection now.
    let awaited: CoreMetrics.Meter?

    /// Runs `body` with a connection of the pool, counted as awaited until the pool hands it over, then as in use.
    func withConnection<Value: Sendable>(_ body: (PostgresConnection) async throws -> Value) async throws -> Value {
        awaited?.increment()
        var waiting = true
        defer { if waiting { awaited?.decrement() } }
        return try await client.withConnection { connection in
            waiting = false
            awaited?.decrement()
            inUse?.increment()
            defer { inUse?.decrement() }
            return try await body(connection)
        }
    }
}
