import Foundation
import Logging
import TableSync

/// Progress of long pushes and pulls on standard error: one line rewritten in place on a terminal, with done of
/// total, rate and time left (`pull todo: 30000/100000 records (30%), 4,210 records/s, 0:17 left`), and plain
/// timestamped log lines (swift-log) with the same figures otherwise (cron, systemd), so logs stay readable.
///
/// Each step (a push, the pull of one table) is timed from the end of the step before it, or from the start of
/// the run, so the first page's wait counts too. On a terminal the display remembers whether its line shows, so a
/// result or an error printed next clears it first (``clearLine()``) instead of landing on top of it. Progress
/// arrives from the library's tasks on any thread; a lock keeps the line whole.
final class ProgressDisplay: @unchecked Sendable {
    /// The display of this process, on its standard error.
    static let standardError = ProgressDisplay(onTerminal: isatty(2) == 1) { CommandOutput.writeError($0) }
    /// A display of log lines on standard error even on a terminal, for `--verbose`, whose log lines would break
    /// a line rewritten in place.
    static let logLines = ProgressDisplay(onTerminal: false) { CommandOutput.writeError($0) }

    /// The control sequence that returns to the start of the line and erases it.
    static let eraseLine = "\r\u{1B}[2K"

    /// One push or one table's pull, as far as the progress reports go.
    private struct Step {
        var name: String
        var total: Int?
        var done: Int
        var start: ContinuousClock.Instant

        /// Whether a report of `name` at `done` of `total` goes on with this step rather than starting another
        /// (sync pushes and pulls several times; each restarts its count).
        func goesOn(_ name: String, done: Int, total: Int?) -> Bool {
            name == self.name && total == self.total && done >= self.done
        }
    }

    private let onTerminal: Bool
    private let now: @Sendable () -> ContinuousClock.Instant
    private let write: @Sendable (String) -> Void
    private let logger = Logger(label: "tablesync", factory: { StreamLogHandler.standardError(label: $0) })
    private let lock = NSLock()
    // Guarded by `lock`: the step under way, when the last report (or the run) came, whether a line shows.
    private var step: Step?
    private var lastReport: ContinuousClock.Instant
    private var lineShows = false

    /// A display that rewrites one line through `write` when `onTerminal`, and logs otherwise; `now` reads the clock.
    init(
        onTerminal: Bool, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        write: @escaping @Sendable (String) -> Void
    ) {
        self.onTerminal = onTerminal
        self.now = now
        self.write = write
        lastReport = now()
    }

    /// What `SyncOptions.progress` takes, for a run that starts now: `nil` with `--quiet`.
    func reporter(quiet: Bool) -> (@Sendable (SyncProgress) -> Void)? {
        guard !quiet else { return nil }
        lock.withLock { lastReport = now() }
        return { @Sendable [self] progress in show(progress) }
    }

    /// Shows one report of a push or pull.
    func show(_ progress: SyncProgress) {
        let (name, done, total) =
            switch progress {
            case .pushed(let settled, let total): ("push", settled, Optional(total))
            case .pulledPage(let table, _, let records, let total): ("pull " + table, records, total)
            }
        lock.withLock {
            let time = now()
            var current =
                step.flatMap { $0.goesOn(name, done: done, total: total) ? $0 : nil }
                ?? Step(name: name, total: total, done: done, start: lastReport)
            current.done = done
            step = current
            lastReport = time
            let rate = ProgressRate(done: done, total: total, start: current.start, now: time)
            if onTerminal {
                write(Self.eraseLine + TerminalText.escaped(ProgressText.line(progress, rate: rate)))
                lineShows = true
            } else {
                logger.info("\(ProgressText.line(progress, rate: rate, showingPage: true))")
            }
        }
    }

    /// Erases the progress line if one shows, so that what is printed next starts on a clean line.
    func clearLine() {
        lock.withLock {
            guard lineShows else { return }
            write(Self.eraseLine)
            lineShows = false
        }
    }
}
