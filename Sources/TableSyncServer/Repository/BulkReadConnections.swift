import GRDB
import Synchronization

/// Read-only SQLite connections of their own for the bulk reads that run on an ``IdlePriorityThread``, lent without
/// waiting.
///
/// An idle thread that is given up (starved of processors) keeps its connection until it next runs, which on a busy
/// machine can be long. On connections of the pool that serves every other read, a few such threads would leave the
/// small reads waiting for a connection; here they hold only these. When all of these are out, a bulk read runs at
/// the normal priority on the pool, so neither the threads nor the connections left behind grow without bound.
final class BulkReadConnections: Sendable {
    private let path: String
    private let configuration: Configuration
    private let limit: Int
    private let state = Mutex((idle: [DatabaseQueue](), opened: 0))

    /// At most `limit` connections to the database at `path`, opened when first needed, set up as `configuration`
    /// says and read-only.
    init(path: String, configuration: Configuration, limit: Int) {
        var configuration = configuration
        configuration.readonly = true
        self.path = path
        self.configuration = configuration
        self.limit = limit
    }

    /// A connection no one else uses, opened if none is idle and fewer than the limit are open; `nil` when all are
    /// out or one cannot be opened. Give it back with ``giveBack(_:)``.
    func take() -> DatabaseQueue? {
        enum Taken {
            case idle(DatabaseQueue)
            case toOpen
            case none
        }
        let taken = state.withLock { state -> Taken in
            if let connection = state.idle.popLast() { return .idle(connection) }
            guard state.opened < limit else { return .none }
            state.opened += 1
            return .toOpen
        }
        switch taken {
        case .idle(let connection): return connection
        case .none: return nil
        case .toOpen:
            do {
                return try DatabaseQueue(path: path, configuration: configuration)
            } catch {
                state.withLock { $0.opened -= 1 }
                return nil
            }
        }
    }

    /// Makes `connection`, from ``take()``, available again.
    func giveBack(_ connection: DatabaseQueue) {
        state.withLock { $0.idle.append(connection) }
    }

    /// How many connections are out now.
    var lent: Int { state.withLock { $0.opened - $0.idle.count } }
}
