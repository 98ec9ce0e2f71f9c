import ArgumentParser
import TableSync

/// `tablesync revert COMMIT`.
struct RevertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revert",
        abstract: "Undo the record changes of a commit, as edits the next push sends.",
        discussion: """
            Like git revert, for the store's records: every record file COMMIT added, changed or removed gets the \
            content it had before COMMIT (its first parent), queued as an edit on the version the store holds now. \
            The push sends them with If-Match, so a record the server changed since meets a conflict. Commit the \
            result as usual (sync --commit). A git revert of a sync commit is not sent: it puts back the server's \
            older copies, which the next sync brings up to date.
            """
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("The commit to undo (any name git takes).", valueName: "COMMIT")) var commit: String
    @Flag(help: "Allow deleting more than half of a table's records.") var allowMassDelete = false

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, purpose: "tablesync revert")
        let report = try await context.revert(commit, allowingMassDelete: allowMassDelete)
        RestoreReportText.print(report, json: global.json)
    }
}
