import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync query [select] TABLE [--filter F] [--orderby K] [--skip N] [--top N]`: a local read.
struct QuerySelectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "select",
        abstract: "Print the local records of TABLE that match an OData query, as a JSON array.",
        discussion:
            """
            Example: tablesync query todo --filter \"complete eq false\" --orderby \"text desc\" --top 10. Reads only \
            the store, never the server.
            """
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: String
    @Option(help: "An OData $filter, e.g. \"startswith(text, 'Buy') and not complete\".") var filter: String?
    @Option(help: "Sort keys: name [asc|desc], separated by commas; id breaks ties.") var orderby: String?
    @Option(help: "Records to skip.") var skip: Int = 0
    @Option(help: "The most records to print.") var top: Int?

    func run() async throws {
        let query = try LocalQuery(filter: filter, orderBy: orderby, skip: skip, top: top)
        let context = try await SyncContext.open(directory: global.store, mode: .readOnly)
        let all = try await context.records(table: table)
        for name in query.unknownPropertyNames(in: all) {
            CommandOutput.printError(
                "warning: no record of \(table) has a property '\(name)'; a string is written in quotes: '\(name)'")
        }
        CommandOutput.printJSON(.array(query.apply(to: all).map { .object($0) }))
    }
}
