/// When `watch` acts: how long it lets a burst of file writes settle, how long it backs off after a failure, and
/// when it commits. Pure rules, tested alone.
package struct WatchTiming: Sendable, Equatable {
    /// A push waits until no file has changed for this long (seconds)…
    package var settle: Double
    /// …but never longer than this after the first change it waits for (seconds), so a store that keeps changing
    /// is still pushed.
    package var maximumDelay: Double
    /// The first wait after a failed run (seconds); it doubles with each failure in a row, up to ``maximumBackoff``.
    package var firstBackoff: Double
    /// The longest wait after failed runs (seconds).
    package var maximumBackoff: Double
    /// With a commit after syncs, how long no run may have changed the store before it commits (seconds).
    package var quietPeriod: Double

    /// Timing of `settle` and `maximumDelay` for pushes, backoff from `firstBackoff` to `maximumBackoff`, and
    /// `quietPeriod` before a commit.
    package init(
        settle: Double = 0.1, maximumDelay: Double = 0.5, firstBackoff: Double = 1, maximumBackoff: Double = 60,
        quietPeriod: Double = 60
    ) {
        self.settle = settle
        self.maximumDelay = maximumDelay
        self.firstBackoff = firstBackoff
        self.maximumBackoff = maximumBackoff
        self.quietPeriod = quietPeriod
    }

    /// When a burst of file changes is pushed: a settle after its latest change, but no later than the maximum
    /// delay after its first.
    package func pushTime(
        firstChange: ContinuousClock.Instant, latestChange: ContinuousClock.Instant
    ) -> ContinuousClock.Instant {
        min(latestChange + .seconds(settle), firstChange + .seconds(maximumDelay))
    }

    /// The wait after the `failures`-th failed run in a row (1-based): doubling from ``firstBackoff``, capped at
    /// ``maximumBackoff``, of which `random` (in `0..<1`) takes a part in the upper half, so that watchers that
    /// failed together do not all come back at once.
    package func backoff(afterFailures failures: Int, random: Double) -> Double {
        let ceiling = min(maximumBackoff, firstBackoff * Double(1 << min(max(failures - 1, 0), 30)))
        return ceiling / 2 + ceiling / 2 * random
    }
}
