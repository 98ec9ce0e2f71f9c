import Logging
import TableSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Progress of long pushes and pulls on standard error: one line rewritten in place on a terminal, plain
/// timestamped log lines (swift-log) otherwise (cron, systemd), so logs stay readable.
enum ProgressDisplay {
    static func reporter(quiet: Bool) -> (@Sendable (SyncProgress) -> Void)? {
        guard !quiet else { return nil }
        let onTerminal = isatty(2) == 1
        let logger = Logger(label: "tablesync", factory: { StreamLogHandler.standardError(label: $0) })
        return { progress in
            let text: String
            switch progress {
            case .pushed(let settled, let total): text = "push: \(settled)/\(total) operations settled"
            case .pulledPage(let table, let page, let records, let total):
                text = "pull \(table): page \(page), \(records)\(total.map { "/\($0)" } ?? "") records"
            }
            if onTerminal {
                CommandOutput.printError("\r\u{1B}[2K" + text, newline: false)
            } else {
                logger.info("\(text)")
            }
        }
    }

    /// Ends the in-place line on a terminal.
    static func finish() {
        if isatty(2) == 1 { CommandOutput.printError("\r\u{1B}[2K", newline: false) }
    }
}
