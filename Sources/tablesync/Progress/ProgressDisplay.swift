import Foundation
import Logging
import TableSync

/// Progress of long pushes and pulls on standard error: one line rewritten in place on a terminal, plain
/// timestamped log lines (swift-log) otherwise (cron, systemd), so logs stay readable.
///
/// On a terminal the display remembers whether its line is showing, so that a result or an error printed next
/// clears it first (``clearLine()``) instead of landing on top of it. Progress arrives from the library's tasks on
/// any thread; a lock keeps the line whole.
final class ProgressDisplay: @unchecked Sendable {
    /// The display of this process, on its standard error.
    static let standardError = ProgressDisplay(onTerminal: isatty(2) == 1) { CommandOutput.printError($0, newline: false) }

    /// The control sequence that returns to the start of the line and erases it.
    static let eraseLine = "\r\u{1B}[2K"

    private let onTerminal: Bool
    private let write: @Sendable (String) -> Void
    private let logger = Logger(label: "tablesync", factory: { StreamLogHandler.standardError(label: $0) })
    private let lock = NSLock()
    /// Whether a progress line shows on the terminal; guarded by `lock`.
    private var lineShows = false

    /// A display that rewrites one line through `write` when `onTerminal`, and logs otherwise.
    init(onTerminal: Bool, write: @escaping @Sendable (String) -> Void) {
        self.onTerminal = onTerminal
        self.write = write
    }

    /// What `SyncOptions.progress` takes: `nil` with `--quiet`.
    func reporter(quiet: Bool) -> (@Sendable (SyncProgress) -> Void)? {
        guard !quiet else { return nil }
        return { @Sendable [self] progress in show(progress) }
    }

    /// Shows one step of a push or pull.
    func show(_ progress: SyncProgress) {
        let text: String
        switch progress {
        case .pushed(let settled, let total): text = "push: \(settled)/\(total) operations settled"
        case .pulledPage(let table, let page, let records, let total):
            text = "pull \(table): page \(page), \(records)\(total.map { "/\($0)" } ?? "") records"
        }
        guard onTerminal else {
            logger.info("\(text)")
            return
        }
        lock.withLock {
            write(Self.eraseLine + text)
            lineShows = true
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
