import PostgresNIO
import Prometheus

/// Leases connections of the PostgreSQL pool and counts them: PostgresNIO's pool does not tell how many of its
/// connections are in use or how many requests wait for one, so the server counts its own leases.
struct PostgresPoolUse: Sendable {
    /// The pool, replaced when the database goes away and comes back.
    let pools: PostgresPools
    /// Connections leased now.
    let inUse: Gauge?
    /// Leases waiting for a connection now.
    let awaited: Gauge?

    /// Runs `body` with a connection of the pool, counted as awaited until the pool hands it over, then as in use;
    /// a statement the database answered, with a result or an error of its own, is noted in the pools.
    /// A pool that gives no connection, unless the request was cancelled meanwhile, throws a
    /// ``PostgresLeaseFailure``: the database could not be reached.
    func withConnection<Value: Sendable>(_ body: (PostgresConnection) async throws -> Value) async throws -> Value {
        awaited?.increment()
        var waiting = true
        defer { if waiting { awaited?.decrement() } }
        let client = await pools.current()
        do {
            return try await client.withConnection { connection in
                waiting = false
                awaited?.decrement()
                inUse?.increment()
                defer { inUse?.decrement() }
                do {
                    let value = try await body(connection)
                    pools.noteAnswer()
                    return value
                } catch let error as PSQLError where error.serverInfo?[.sqlState] != nil {
                    pools.noteAnswer()
                    throw error
                }
            }
        } catch  where waiting && !Task.isCancelled && !(error is PSQLError) {
            throw PostgresLeaseFailure(underlying: error)
        }
    }
}
