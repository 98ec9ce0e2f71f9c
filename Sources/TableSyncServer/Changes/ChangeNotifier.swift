import Synchronization

/// Wakes the change feed's waiting requests when a table they listed changes, without polling: the write paths
/// call ``tablesChanged(_:)`` after commit (``ChangeSignallingRepository``, and on PostgreSQL the
/// ``PostgresChangeListener`` for writes of other server processes).
///
/// A waiter takes a ``Ticket`` before it reads the marks and waits on that ticket, so a change committed between
/// its read and its wait wakes it at once instead of being missed. A wake-up says only that a table changed for
/// someone: in a per-user table the waiter reads its own marks again and goes on waiting when they are the same.
final class ChangeNotifier: Sendable {
    /// How many changes each of some tables had seen when the ticket was taken.
    struct Ticket: Sendable {
        fileprivate let generations: [String: UInt64]
    }

    private struct Waiter {
        let tables: [String]
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        /// Changes seen per table (lowercased name) since the server started.
        var generations: [String: UInt64] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var waitersByTable: [String: Set<UInt64>] = [:]
        /// Waits cancelled before they were registered.
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0

        func hasChanged(since ticket: Ticket) -> Bool {
            ticket.generations.contains { table, generation in generations[table, default: 0] != generation }
        }

        mutating func remove(_ id: UInt64) -> Waiter? {
            guard let waiter = waiters.removeValue(forKey: id) else { return nil }
            for table in waiter.tables {
                waitersByTable[table]?.remove(id)
                if waitersByTable[table]?.isEmpty == true { waitersByTable[table] = nil }
            }
            return waiter
        }
    }

    private let state = Mutex(State())

    /// A ticket for `tables` (served names, in any case), to take before reading their marks.
    func ticket(for tables: [String]) -> Ticket {
        let keys = tables.map { $0.lowercased() }
        return state.withLock { state in
            Ticket(generations: Dictionary(keys.map { ($0, state.generations[$0, default: 0]) }) { first, _ in first })
        }
    }

    /// `tables` (served names, in any case) have changed: every request waiting on one of them wakes.
    func tablesChanged(_ tables: some Sequence<String>) {
        let woken = state.withLock { state -> [Waiter] in
            var ids: Set<UInt64> = []
            for table in Set(tables.map { $0.lowercased() }) {
                state.generations[table, default: 0] &+= 1
                ids.formUnion(state.waitersByTable[table] ?? [])
            }
            return ids.compactMap { state.remove($0) }
        }
        for waiter in woken { waiter.continuation.resume() }
    }

    /// Returns once one of the ticket's tables has changed since the ticket was taken, or the task is cancelled.
    func waitForChange(since ticket: Ticket) async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let registered = state.withLock { state -> Bool in
                    if state.cancelled.remove(id) != nil || state.hasChanged(since: ticket) { return false }
                    let tables = Array(ticket.generations.keys)
                    state.waiters[id] = Waiter(tables: tables, continuation: continuation)
                    for table in tables { state.waitersByTable[table, default: []].insert(id) }
                    return true
                }
                if !registered { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                if let waiter = state.remove(id) { return waiter }
                state.cancelled.insert(id)
                return nil
            }
            waiter?.continuation.resume()
        }
        // A cancel that came after a change had woken the wait left its mark; the handler is gone now.
        state.withLock { _ = $0.cancelled.remove(id) }
    }
}
