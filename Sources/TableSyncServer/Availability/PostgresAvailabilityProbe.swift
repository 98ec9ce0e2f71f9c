import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle

/// Checks that PostgreSQL can be reached, with `SELECT 1` on a connection of its own, and tells
/// ``DatabaseAvailability``.
///
/// It checks every half second, at once when a request loses its connection (``DatabaseAvailability/checkSoon()``),
/// and at once when its own connection closes, as every connection does when the database stops. A check the
/// database refuses or drops (connection refused, the database shutting down or starting up, a lost connection)
/// means the database is away; a check that is merely slow, or refused for want of connections, is a miss, and
/// only ``missesToDeclareAway`` in a row mean away, so that a busy database is not taken for a missing one; a slow
/// check while the database answers requests' statements is no miss at all
/// (``verdict(of:wasUp:misses:requestsAnswered:)``). When the database goes away and when it is back, the pool is
/// replaced by a fresh one (``PostgresPools``).
struct PostgresAvailabilityProbe: Service {
    /// Time between checks.
    static let period = Duration.milliseconds(500)
    /// The longest a check, connecting included, may take before it counts as a miss.
    static let checkTimeLimit = Duration.seconds(2)
    /// Misses in a row that mean the database is away.
    static let missesToDeclareAway = 3

    let location: PostgresLocation
    let availability: DatabaseAvailability
    let pools: PostgresPools
    let logger: Logger

    /// What one check found.
    enum Outcome: Equatable {
        case answered
        /// The database refused or dropped the connection.
        case away(String)
        /// No answer within the time limit, or no connection to spare.
        case miss(String)
    }

    func run() async throws {
        var settings = try location.singleConnectionConfiguration()
        settings.options.connectTimeout = TimeAmount(Self.checkTimeLimit)
        let configuration = settings
        let availability = self.availability
        await cancelWhenGracefulShutdown { [self] in
            await withDiscardingTaskGroup { group in
                group.addTask {
                    while (try? await Task.sleep(for: Self.period)) != nil { availability.checkSoon() }
                }
                var connection: PostgresConnection?
                var misses = 0
                for await _ in availability.checkRequests {
                    guard availability.isArmed else { continue }
                    let check = await availability.checkStarting()
                    let answersBefore = pools.answersSoFar
                    let outcome = await Self.check(
                        &connection, location: location, configuration: configuration, logger: logger
                    ) { availability.checkSoon() }
                    // Stopping: a check cut short says nothing of the database.
                    if Task.isCancelled { break }
                    let wasUp = availability.isUp
                    let verdict = Self.verdict(
                        of: outcome, wasUp: wasUp, misses: misses,
                        requestsAnswered: pools.answersSoFar != answersBefore)
                    misses = verdict.misses
                    if verdict.isUp != wasUp { await pools.replace() }
                    await availability.checked(check, isUp: verdict.isUp, reason: verdict.reason)
                }
                group.cancelAll()
                try? await connection?.close()
            }
        }
    }

    /// What one check's `outcome` means, given whether the database was up before it, the `misses` in a row before
    /// it, and whether the database answered any request's statement while the check ran. A miss while requests are
    /// answered is no miss: the database is busy, not away, and declaring it away would refuse every request and
    /// fail those waiting in the pool.
    static func verdict(
        of outcome: Outcome, wasUp: Bool, misses: Int, requestsAnswered: Bool
    ) -> (isUp: Bool, misses: Int, reason: String?) {
        switch outcome {
        case .answered:
            return (true, 0, nil)
        case .away(let reason):
            return (false, misses, reason)
        case .miss(let reason) where requestsAnswered:
            return (wasUp, 0, reason)
        case .miss(let reason):
            return (wasUp && misses + 1 < missesToDeclareAway, misses + 1, reason)
        }
    }

    /// One check on `connection`, opened first when there is none or it closed; a connection that failed is closed
    /// and forgotten. `onClose` runs when a connection opened here closes.
    static func check(
        _ connection: inout PostgresConnection?, location: PostgresLocation,
        configuration: PostgresConnection.Configuration, logger: Logger,
        onClose: @escaping @Sendable () -> Void
    ) async -> Outcome {
        do {
            let open: PostgresConnection
            if let connection, !connection.isClosed {
                open = connection
            } else {
                open = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
                open.closeFuture.whenComplete { _ in onClose() }
                connection = open
            }
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    _ = try await open.query("SELECT 1", logger: logger).collect()
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: checkTimeLimit)
                    return false
                }
                let answered = try await group.next() ?? false
                group.cancelAll()
                guard answered else {
                    // Fails the query, which cancellation alone does not end, so that the group can end.
                    try? await open.close()
                    throw CheckTimedOut()
                }
            }
            return .answered
        } catch {
            try? await connection?.close()
            connection = nil
            return outcome(of: error, location: location)
        }
    }

    /// What a failed check means.
    static func outcome(of error: any Error, location: PostgresLocation) -> Outcome {
        if error is CheckTimedOut { return .miss("no answer within \(checkTimeLimit)") }
        let reason = location.refusal(of: error)
        if case .connectTimeout = (error as? PSQLError)?.underlying as? ChannelError { return .miss(reason) }
        if let state = (error as? PSQLError)?.serverInfo?[.sqlState], state.hasPrefix("53") { return .miss(reason) }
        return .away(reason)
    }

    /// A check that did not finish within ``checkTimeLimit``.
    struct CheckTimedOut: Error {}
}
