import TableSyncStorage
/// What ``StoreWatcher`` tells as it runs: each run that did something, each failure and the wait after it, each
/// commit.
public enum WatchEvent: Sendable {
    /// Watching began: `changeFeed` when the server's change feed wakes pulls (otherwise it polls every
    /// `pollInterval` seconds; `false` too when the server could not be asked at the start, and the watch follows
    /// the feed once it answers), `fileEvents` when the file system reports writes (otherwise the store is scanned
    /// at an interval).
    case started(changeFeed: Bool, fileEvents: Bool, pollInterval: Double)
    /// A run pushed and pulled; sent only when it moved something (an operation, a record, a conflict, a
    /// problem).
    case synced(SyncReport)
    /// A run pushed; sent only when it moved something.
    case pushed(PushReport)
    /// A run failed; the next one starts after `retryIn` seconds, or sooner when something changes.
    case failed(error: any CategorizedError, retryIn: Double)
    /// The change feed failed; it is asked again after `retryIn` seconds, and the next answer brings one catch-up
    /// pull.
    case feedLost(error: any CategorizedError, retryIn: Double)
    /// Another command holds the store's lock (named by what its holder wrote): the run waits for it.
    case waitingForLock(holder: String)
    /// The store's files were committed after a quiet period, with this subject.
    case committed(subject: String)
    /// The commit after a quiet period failed; the watch goes on, and tries again after the next change.
    case commitFailed(reason: String)
    /// The watch ended, on ``StoreWatcher/stop()``, after what was in flight.
    case stopped
}

/// A watch found its store's directory replaced (removed and made again at its path, as a re-clone in place does)
/// and stopped without running or committing anything in the new one: a service manager that restarts it watches
/// the new store from its own start.
public struct StoreReplaced: CategorizedError {
    /// The store's path.
    public let path: String
    /// ``FailureKind/invalidStore``: the store the watch opened is gone.
    public var kind: FailureKind { .invalidStore }
    public var description: String {
        """
        the store's directory \(path) was replaced while the watch ran (removed and made again, as a re-clone does); \
        the watch stopped without touching the new one: start it again to watch it
        """
    }
}
