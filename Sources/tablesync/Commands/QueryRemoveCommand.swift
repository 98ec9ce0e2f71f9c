import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync query remove QUERY_ID`.
struct QueryRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a pull query (its records stay).")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The query id.") var queryID: String

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, purpose: "tablesync query remove")
        try await context.removeQuery(id: queryID)
        if global.json {
            CommandOutput.printJSON(["removed": .string(queryID)])
        } else {
            CommandOutput.printText("Removed query \(queryID).")
        }
    }
}
