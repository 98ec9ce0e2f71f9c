import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync query`: the pull queries of `queries.json`.
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Read local records, or manage the pull queries in queries.json.",
        discussion:
            """
            tablesync query TABLE [--filter F] reads local records (the select subcommand is the default); add, list \
            and remove manage pull queries.
            """,
        subcommands: [QuerySelectCommand.self, QueryAddCommand.self, QueryListCommand.self, QueryRemoveCommand.self],
        defaultSubcommand: QuerySelectCommand.self
    )
}
