import Logging
import PostgresNIO
import ServiceLifecycle

/// Carries writes between server processes on one PostgreSQL database: every write transaction sends
/// `pg_notify(channel, table)`, which PostgreSQL delivers at commit, and each process listens on one connection of
/// its own, outside the pool, and wakes its ``ChangeNotifier``. A write through one instance thus wakes a change
/// feed request waiting on another.
///
/// A lost connection is opened again after a pause; notifications sent meanwhile are gone, so every served table is
/// then signalled once and waiting requests read their marks again. When the database itself is away, the listener
/// says nothing of its own (``DatabaseAvailability`` logs it once) and waits until the database is back. It runs as
/// a service of the application and ends with its graceful shutdown.
struct PostgresChangeListener: Service {
    /// The notification channel of table changes; the payload is the served table's name.
    static let channel = "tablesync_changes"
    /// The pause before the connection is opened again after it failed.
    static let reconnectPause = Duration.seconds(1)

    let location: PostgresLocation
    let tables: [String]
    let notifier: ChangeNotifier
    let availability: DatabaseAvailability
    let logger: Logger

    func run() async throws {
        let configuration = try location.singleConnectionConfiguration()
        await cancelWhenGracefulShutdown { [self] in
            var connected = false
            while !Task.isCancelled {
                do {
                    try await PostgresLocation.withSingleConnection(configuration, logger: logger) { connection in
                        try await withTaskCancellationHandler {
                            try await connection.listen(on: Self.channel) { notifications in
                                if connected { notifier.tablesChanged(tables) }
                                connected = true
                                for try await notification in notifications {
                                    notifier.tablesChanged([notification.payload])
                                }
                            }
                        } onCancel: {
                            // Ends the wait for the next notification, which cancellation alone may not.
                            let closing: EventLoopFuture<Void> = connection.close()
                            _ = closing
                        }
                    }
                } catch {
                    if Task.isCancelled { return }
                    await waitForDatabase(lost: error)
                }
                try? await Task.sleep(for: Self.reconnectPause)
            }
        }
    }

    /// Has the database checked at once and waits until a check that started after the loss finds it up; the loss
    /// is logged only when the database was up, the listener's connection alone being gone.
    private func waitForDatabase(lost error: any Error) async {
        let verdicts = await availability.verdictsOfNextChecks()
        availability.checkSoon()
        var first = true
        for await verdict in verdicts {
            if first && verdict.isUp {
                logger.warning(
                    "the change feed lost its PostgreSQL listener; reconnecting",
                    metadata: ["error": "\(PostgresLocation.reason(of: error))"])
            }
            first = false
            if verdict.isUp { return }
        }
    }
}
