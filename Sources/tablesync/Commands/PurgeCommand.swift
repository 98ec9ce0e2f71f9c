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
    @Flag(
        help:
            "Also drop the table's pending operations, hand changes (edited, created and deleted files) and conflicts."
    ) var force = false

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, purpose: "tablesync purge")
        let report = try await context.purge(table: table, filter: filter, force: force)
        if global.json {
            CommandOutput.printJSON([
                "removed": .integer(Int64(report.removed)),
                "droppedOperations": .integer(Int64(report.droppedOperations)),
                "droppedHandChanges": .integer(Int64(report.droppedHandChanges)),
                "droppedConflicts": .integer(Int64(report.droppedConflicts))
            ])
        } else {
            var text = "Purged \(report.removed) record(s) of \(table)."
            let dropped = [
                (report.droppedOperations, "pending operation(s)"), (report.droppedHandChanges, "hand change(s)"),
                (report.droppedConflicts, "conflict(s)")
            ].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
            if !dropped.isEmpty { text += " Dropped \(dropped.joined(separator: ", ")); nothing of them is sent." }
            CommandOutput.printText(text)
        }
    }
}
