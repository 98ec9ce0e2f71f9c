import Synchronization

/// Lets at most ``limit`` bulk reads (``ReadWeight``) run at once; the others wait for a turn, in order of arrival.
/// Without it, a few costly `$filter`s or pages of large records take every processor and database reader, and the
/// small requests of every other client wait behind them.
///
/// A read waits at most the bound ``run(waitingAtMost:_:)`` is given; then it is refused with a 503 and
/// `Retry-After`, as a busy database is. A read whose task is cancelled while it waits (its client left, the server
/// is stopping) leaves the queue at once. A turn is given back when its read ends, however it ends, and goes straight
/// to the first waiter.
final class ReadAdmission: Sendable {
    /// The most bulk reads running at once.
    let limit: Int
    private let metrics: ServerMetrics
    private let state = Mutex(State())

    /// The refusal of a read that waited as long as it may.
    static let busy = ProtocolError(
        status: .serviceUnavailable,
        message: "the server is busy with other large pages or costly $filters; retry later, or ask for smaller pages",
        retryAfterSeconds: DatabaseErrorClassifier.retryAfterSeconds)

    private struct Waiter {
        let ticket: Int
        let turn: CheckedContinuation<Void, any Error>
        /// Refuses the waiter when it has waited as long as it may; cancelled when it leaves the queue otherwise.
        let deadline: Task<Void, Never>
    }

    private enum QueueEntry {
        case admitted, cancelled, queued
    }

    private struct State {
        var running = 0
        var waiting: [Waiter] = []
        var nextTicket = 0
    }

    /// Admits at most `limit` reads at once; `metrics` counts the reads waiting and those refused.
    init(limit: Int, metrics: ServerMetrics) {
        self.limit = limit
        self.metrics = metrics
    }

    /// Runs `read` once a turn is free, waiting at most `wait` for one. Throws ``busy`` when the wait ran out, and
    /// `CancellationError` when the task was cancelled before its turn came.
    func run<Value>(waitingAtMost wait: Duration, _ read: () async throws -> Value) async throws -> Value {
        try await takeTurn(waitingAtMost: wait)
        defer { giveTurnBack() }
        try Task.checkCancellation()
        return try await read()
    }

    private func takeTurn(waitingAtMost wait: Duration) async throws {
        let ticket: Int? = state.withLock { state in
            if state.running < limit {
                state.running += 1
                return nil
            }
            state.nextTicket += 1
            return state.nextTicket
        }
        guard let ticket else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (turn: CheckedContinuation<Void, any Error>) in
                // Decided under the lock with the queue: a turn given back since the first look, or a cancellation
                // whose handler ran before the waiter was queued (and found nothing to take out).
                let entry: QueueEntry = state.withLock { state in
                    if state.running < limit {
                        state.running += 1
                        return .admitted
                    }
                    if Task.isCancelled { return .cancelled }
                    let deadline = Task { [self] in
                        guard (try? await Task.sleep(for: wait)) != nil else { return }
                        if leaveQueue(ticket, with: Self.busy) { metrics.bulkReadsRefused.increment() }
                    }
                    state.waiting.append(Waiter(ticket: ticket, turn: turn, deadline: deadline))
                    metrics.bulkReadsWaiting.increment()
                    return .queued
                }
                switch entry {
                case .admitted: turn.resume()
                case .cancelled: turn.resume(throwing: CancellationError())
                case .queued: break
                }
            }
        } onCancel: {
            leaveQueue(ticket, with: CancellationError())
        }
    }

    /// Takes the waiter holding `ticket` out of the queue and resumes it with `error`; `false` when it is no longer
    /// there (its turn came first, or it left already).
    @discardableResult
    private func leaveQueue(_ ticket: Int, with error: any Error) -> Bool {
        let waiter: Waiter? = state.withLock { state in
            guard let index = state.waiting.firstIndex(where: { $0.ticket == ticket }) else { return nil }
            metrics.bulkReadsWaiting.decrement()
            return state.waiting.remove(at: index)
        }
        guard let waiter else { return false }
        waiter.deadline.cancel()
        waiter.turn.resume(throwing: error)
        return true
    }

    /// A read ended: its turn goes to the first waiter, or is free again.
    private func giveTurnBack() {
        let next: Waiter? = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            metrics.bulkReadsWaiting.decrement()
            return state.waiting.removeFirst()
        }
        guard let next else { return }
        next.deadline.cancel()
        next.turn.resume()
    }
}
