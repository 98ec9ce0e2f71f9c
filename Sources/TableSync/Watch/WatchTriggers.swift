/// What wakes ``StoreWatcher``'s loop.
enum WatchTrigger: Sendable, Equatable {
    /// Files in the store changed (or the interval of a scan came round): a push, whose scan looks at `scope`.
    case files(ScanScope)
    /// The change feed says these tables changed on the server: a push, then their queries' pulls.
    case serverChanged(Set<String>)
    /// The server may have changed anything (the feed came back, or a poll's interval came round): a push, then
    /// every query's pull.
    case catchUp
    /// Stop after what is in flight.
    case stop
}

/// The triggers posted by the watcher's sources (file events, the change feed, timers), taken one at a time by
/// its loop, which may wait for the next one until a deadline.
actor WatchTriggers {
    private var pending: [WatchTrigger] = []
    private var waiter: CheckedContinuation<WatchTrigger?, Never>?
    /// Tells a wait's timer from a later wait's.
    private var waits = 0

    /// Hands `trigger` to the loop.
    func post(_ trigger: WatchTrigger) {
        if let waiter {
            self.waiter = nil
            waiter.resume(returning: trigger)
        } else {
            pending.append(trigger)
        }
    }

    /// The next trigger, or `nil` once `deadline` has passed without one (never, without a deadline).
    func next(before deadline: ContinuousClock.Instant?) async -> WatchTrigger? {
        if !pending.isEmpty { return pending.removeFirst() }
        if let deadline, deadline <= .now { return nil }
        waits += 1
        let wait = waits
        let timer = deadline.map { deadline in
            Task {
                try? await Task.sleep(until: deadline, clock: .continuous)
                self.expire(wait)
            }
        }
        let trigger = await withCheckedContinuation { waiter = $0 }
        timer?.cancel()
        return trigger
    }

    private func expire(_ wait: Int) {
        guard wait == waits, let waiter else { return }
        self.waiter = nil
        waiter.resume(returning: nil)
    }
}
