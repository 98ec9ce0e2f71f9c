import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync purge TABLE`.
struct PurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Remove local records of TABLE (all, or those matching --filter) and reset its query watermarks.",
        discussion: "Refused while the table has changes not pushed yet, unless --force, which drops them."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: String
    @Option(help: "Only records matching this OData $filter.") var filter: String?
    @Flag(help: "Also drop the table's pending operations, hand edits and conflicts.") var force = false

    func run() async throws {
        let context = try SyncContext(directory: global.store, purpose: "tablesync purge")
        let removed = try await context.purge(table: table, filter: filter, force: force)
        if global.json {
            CommandOutput.printJSON(["removed": .integer(Int64(removed))])
        } else {
            CommandOutput.printText("Purged \(removed) record(s) of \(table).")
        }
    }
}
