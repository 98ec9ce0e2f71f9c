import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync query add TABLE QUERY_ID [--filter F]`.
struct QueryAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an incremental pull query.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table it pulls.") var table: String
    @Argument(help: "The query id (no '|', at most 255 characters).") var queryID: String
    @Option(help: "An OData $filter the query adds to every request.") var filter: String?

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, purpose: "tablesync query add")
        let query = try await context.addQuery(PullQuery(id: queryID, table: table, filter: filter))
        if global.json {
            CommandOutput.printJSON(["added": .string(query.id), "table": .string(query.table)])
        } else {
            CommandOutput.printText("Added query \(query.id) on table \(query.table).")
        }
    }
}
