import ArgumentParser
import SyncProtocol
import TableSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Printing results and errors the same way in every command.
enum CommandOutput {
    /// Prints `value` as canonical JSON on standard output.
    static func printJSON(_ value: JSONValue) {
        print(CanonicalJSON.string(value), terminator: "")
    }

    /// Prints `text` for a person on standard output, its control characters escaped (``TerminalText``).
    static func printText(_ text: String, terminator: String = "\n") {
        print(TerminalText.escaped(text), terminator: terminator)
    }

    /// Writes `text` on standard error at once (unbuffered, so it lands in order with progress lines), its control
    /// characters escaped (``TerminalText``).
    static func printError(_ text: String, newline: Bool = true) {
        writeError(TerminalText.escaped(text) + (newline ? "\n" : ""))
    }

    /// Writes `text` on standard error at once, as it is: for the progress line's own control sequences.
    static func writeError(_ text: String) {
        var text = text
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }

    /// Prints `error` and exits with its code: the one place `tablesync` prints errors, whether the arguments were
    /// wrong (exit 2) or the run failed.
    ///
    /// Without `json` the error is one sentence on standard error (bad usage adds the usage line, as the argument
    /// parser prints it); with `json` it is `{"error": "...", "exitCode": N}` on standard output. A progress line
    /// still showing on a terminal is cleared first, so the error never lands on top of it. An `ExitCode` (a command
    /// that printed its result and ends with a status other than done), `--help` and `--version` print nothing here.
    static func exit(with error: any Error, json: Bool) -> Never {
        ProgressDisplay.standardError.clearLine()
        if error is ExitCode || TableSyncCommand.exitCode(for: error) == .success {
            TableSyncCommand.exit(withError: error)
        }
        let status: ExitStatus
        let sentence: String
        let text: String
        if let error = error as? CategorizedError {
            status = ExitStatus(error.kind)
            sentence = FlagHint.adding(to: error.description, for: error)
            text = "tablesync: " + sentence
        } else if TableSyncCommand.exitCode(for: error) == .validationFailure {
            // The argument parser's code for bad usage is 64; TableSync's contract says 2.
            status = .usage
            sentence = TableSyncCommand.message(for: error)
            text = TableSyncCommand.fullMessage(for: error)
        } else {
            status = .failure
            sentence = "\(error)"
            text = "tablesync: " + sentence
        }
        if json {
            printJSON(["error": .string(sentence), "exitCode": .integer(Int64(status.rawValue))])
        } else {
            printError(text)
        }
        TableSyncCommand.exit(withError: ExitCode(status))
    }
}
