import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync status`.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show pending operations, hand edits not yet queued, broken files and conflicts.",
        discussion:
            """
            Reads only, takes no lock, and costs one stat per record file when nothing changed. Exits 7 when a record \
            file is broken, 3 when conflicts wait.
            """
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, mode: .readOnly)
        let status = try await context.status()
        if global.json {
            CommandOutput.printJSON(StatusReportText.json(status))
        } else {
            CommandOutput.printText(StatusReportText.text(status, root: context.layout.root), terminator: "")
        }
        if !status.problems.isEmpty { throw ExitCode(.invalidStore) }
        if !status.conflicts.isEmpty { throw ExitCode(.conflictsWaiting) }
    }
}
