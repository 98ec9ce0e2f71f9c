import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync delete TABLE ID`.
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Remove a record locally and queue its delete."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: String
    @Argument(help: "The record's id.") var id: String

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, purpose: "tablesync delete")
        try await context.table(table).delete(id: id)
        if global.json {
            CommandOutput.printJSON(["deleted": .string("\(table)/\(id)")])
        } else {
            CommandOutput.printText("Deleted \(table)/\(id) (queued for push).")
        }
    }
}
