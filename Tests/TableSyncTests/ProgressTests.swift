import Foundation
import Testing
@testable import TableSync
@testable import tablesync

/// The figures of the progress line (done of total, rate, time left) and the display that shows them, on a clock
/// the tests set.
@Suite struct ProgressTests {
    static let start = ContinuousClock.now

    struct RateCase: Sendable, CustomStringConvertible {
        var done: Int
        var total: Int?
        var milliseconds: Int
        var perSecond: Double?
        var secondsLeft: Double?
        var description: String { "\(done) of \(total.map(String.init) ?? "?") in \(milliseconds) ms" }
    }

    @Test(
        "rate and time left from two instants",
        arguments: [
            RateCase(
                done: 30_000, total: 100_000, milliseconds: 10_000, perSecond: 3_000, secondsLeft: 70_000.0 / 3_000),
            RateCase(done: 500, total: nil, milliseconds: 250, perSecond: 2_000, secondsLeft: nil),
            RateCase(done: 3, total: 3, milliseconds: 1_500, perSecond: 2, secondsLeft: 0),
            // The count fell behind.
            RateCase(done: 120, total: 100, milliseconds: 1_000, perSecond: 120, secondsLeft: 0),
            RateCase(done: 0, total: 100, milliseconds: 1_000, perSecond: nil, secondsLeft: nil), // nothing done yet
            RateCase(done: 10, total: 100, milliseconds: 0, perSecond: nil, secondsLeft: nil) // no time passed
        ])
    func rate(_ example: RateCase) throws {
        let rate = ProgressRate(
            done: example.done, total: example.total, start: Self.start,
            now: Self.start + .milliseconds(example.milliseconds))
        guard let perSecond = example.perSecond else {
            #expect(rate == nil)
            return
        }
        let measured = try #require(rate)
        #expect(abs(measured.perSecond - perSecond) < 1e-9)
        #expect(measured.secondsLeft.map { abs($0 - example.secondsLeft!) < 1e-9 } ?? (example.secondsLeft == nil))
    }

    @Test("the line's words: done of total, percentage, rate, time left")
    func lines() {
        let start = Self.start
        let pull = SyncProgress.pulledPage(table: "todo", page: 30, records: 30_000, total: 100_000)
        let rate = ProgressRate(done: 30_000, total: 100_000, start: start, now: start + .seconds(7))
        #expect(
            ProgressText.line(pull, rate: rate) == "pull todo: 30000/100000 records (30%), 4,286 records/s, 0:17 left")
        #expect(
            ProgressText.line(pull, rate: rate, showingPage: true)
                == "pull todo: page 30, 30000/100000 records (30%), 4,286 records/s, 0:17 left")
        #expect(ProgressText.line(pull, rate: nil) == "pull todo: 30000/100000 records (30%)")
        let uncounted = SyncProgress.pulledPage(table: "notes", page: 2, records: 2_000, total: nil)
        #expect(
            ProgressText.line(
                uncounted, rate: ProgressRate(done: 2_000, total: nil, start: start, now: start + .seconds(4)))
                == "pull notes: 2000 records, 500 records/s")
        let push = SyncProgress.pushed(settled: 5, total: 20)
        #expect(
            ProgressText.line(push, rate: ProgressRate(done: 5, total: 20, start: start, now: start + .seconds(2)))
                == "push: 5/20 operations settled (25%), 2.5 operations/s, 0:06 left")
        #expect(ProgressText.line(.pushed(settled: 0, total: 0), rate: nil) == "push: 0/0 operations settled")
    }

    @Test("numbers and durations as a person reads them")
    func numbers() {
        #expect(ProgressText.grouped(0) == "0")
        #expect(ProgressText.grouped(999) == "999")
        #expect(ProgressText.grouped(4_210) == "4,210")
        #expect(ProgressText.grouped(1_234_567) == "1,234,567")
        #expect(ProgressText.perSecond(0.04) == "0.0")
        #expect(ProgressText.perSecond(2.46) == "2.5")
        #expect(ProgressText.perSecond(9.96) == "10")
        #expect(ProgressText.perSecond(4_210.4) == "4,210")
        #expect(ProgressText.duration(0) == "0:00")
        #expect(ProgressText.duration(16.2) == "0:17", "rounded up: never 0:00 before the end")
        #expect(ProgressText.duration(725) == "12:05")
        #expect(ProgressText.duration(3_723) == "1:02:03")
        #expect(ProgressText.duration(1e12) == "99:59:59")
        #expect(ProgressText.count(120, of: 100, unit: "records") == "120/100 records (100%)")
    }

    @Test("on a terminal: one line rewritten in place, each step timed from the end of the one before, erased once")
    func terminalDisplay() throws {
        let clock = TestClock(Self.start)
        let written = Written()
        let display = ProgressDisplay(onTerminal: true, now: { clock.now }, write: { written.append($0) })
        let report = try #require(display.reporter(quiet: false))
        #expect(display.reporter(quiet: true) == nil)
        display.clearLine()
        #expect(written.all.isEmpty, "nothing to erase before a line shows")

        clock.advance(.seconds(2))
        report(.pushed(settled: 10, total: 40))
        clock.advance(.seconds(2))
        report(.pushed(settled: 40, total: 40))
        clock.advance(.seconds(4))
        report(.pulledPage(table: "todo", page: 1, records: 1_000, total: 3_000))
        clock.advance(.seconds(4))
        report(.pulledPage(table: "todo", page: 2, records: 2_000, total: 3_000))
        display.clearLine()
        display.clearLine()
        let erase = ProgressDisplay.eraseLine
        #expect(
            written.all == [
                erase + "push: 10/40 operations settled (25%), 5.0 operations/s, 0:06 left",
                erase + "push: 40/40 operations settled (100%), 10 operations/s, 0:00 left",
                erase + "pull todo: 1000/3000 records (33%), 250 records/s, 0:08 left",
                erase + "pull todo: 2000/3000 records (66%), 250 records/s, 0:04 left",
                erase
            ])
    }

    /// A clock the test moves.
    final class TestClock: @unchecked Sendable {
        private let lock = NSLock()
        private var instant: ContinuousClock.Instant
        init(_ start: ContinuousClock.Instant) { instant = start }
        var now: ContinuousClock.Instant { lock.withLock { instant } }
        func advance(_ duration: Duration) { lock.withLock { instant = instant + duration } }
    }

    /// What the display wrote, in order.
    final class Written: @unchecked Sendable {
        private let lock = NSLock()
        private var texts: [String] = []
        func append(_ text: String) { lock.withLock { texts.append(text) } }
        var all: [String] { lock.withLock { texts } }
    }
}
