/// How fast a push or pull goes and how long it has left: the rule behind the figures of a progress line.
///
/// A pure rule over the instants it is given (the display passes its clock's readings, tests pass their own):
/// the rate is the average since the step began, which stays steady from page to page, and the time left is what
/// remains of the total at that rate.
///
/// ```swift
/// let start = ContinuousClock.now
/// ProgressRate(done: 30_000, total: 100_000, start: start, now: start + .seconds(10))
/// // perSecond 3,000, secondsLeft 23.3
/// ```
struct ProgressRate: Equatable, Sendable {
    /// Operations or records per second since the start.
    var perSecond: Double
    /// Seconds until `total` at that rate; `nil` when the total is unknown.
    var secondsLeft: Double?

    /// The rate of `done` items between `start` and `now`, and the time left until `total` (none once `done`
    /// reaches it); `nil` while nothing is done or no time has passed.
    init?(done: Int, total: Int?, start: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        let seconds = (now - start) / .seconds(1)
        guard done > 0, seconds > 0 else { return nil }
        perSecond = Double(done) / seconds
        secondsLeft = total.map { Double(max($0 - done, 0)) / perSecond }
    }
}
