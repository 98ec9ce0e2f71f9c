import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync restore TABLE/ID ... --source COMMIT`.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put records back to their content in an earlier commit, as edits the next push sends.",
        discussion: """
            Like git restore --source, for records: each named record gets the content it had in COMMIT, queued as \
            an edit on the version the store holds now, so the push sends it with If-Match and a record the server \
            changed since meets a conflict instead of being overwritten. A record the store no longer holds is \
            inserted again; one COMMIT did not have is deleted. Checking a file out with git alone is never sent: \
            git puts back the server's older copy, which the next sync brings up to date.
            """
    )

    @OptionGroup var global: GlobalOptions
    @Argument(
        help: ArgumentHelp("The records to restore.", valueName: "TABLE/ID"), transform: RecordKey.init(tableSlashID:))
    var records: [RecordKey]
    @Option(help: ArgumentHelp("The commit whose content to restore (any name git takes).", valueName: "COMMIT"))
    var source: String
    @Flag(help: "Allow deleting more than half of a table's records.") var allowMassDelete = false

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, purpose: "tablesync restore")
        let report = try await context.restore(records, from: source, allowingMassDelete: allowMassDelete)
        RestoreReportText.print(report, json: global.json)
    }
}
