import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync query`: the pull queries of `queries.json`.
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Read local records, or manage the pull queries in queries.json.",
        discussion: "tablesync query TABLE [--filter F] reads local records (the select subcommand is the default); add, list and remove manage pull queries.",
        subcommands: [QuerySelectCommand.self, QueryAddCommand.self, QueryListCommand.self, QueryRemoveCommand.self],
        defaultSubcommand: QuerySelectCommand.self
    )
}

/// `tablesync query [select] TABLE [--filter F] [--orderby K] [--skip N] [--top N]`: a local read.
struct QuerySelectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "select",
        abstract: "Print the local records of TABLE that match an OData query, as a JSON array.",
        discussion: "Example: tablesync query todo --filter \"complete eq false\" --orderby \"text desc\" --top 10. Reads only the store, never the server."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: String
    @Option(help: "An OData $filter, e.g. \"startswith(text, 'Buy') and not complete\".") var filter: String?
    @Option(help: "Sort keys: name [asc|desc], separated by commas; id breaks ties.") var orderby: String?
    @Option(help: "Records to skip.") var skip: Int = 0
    @Option(help: "The most records to print.") var top: Int?

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let query = try LocalQuery(filter: filter, orderBy: orderby, skip: skip, top: top)
            let context = try SyncContext(directory: global.store, mode: .readOnly)
            let records = try await context.table(table).query(query)
            CommandOutput.printJSON(.array(records.map { .object($0) }))
            return .done
        }
    }
}

/// `tablesync query add TABLE QUERY_ID [--filter F]`.
struct QueryAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an incremental pull query.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table it pulls.") var table: String
    @Argument(help: "The query id (no '|', at most 255 characters).") var queryID: String
    @Option(help: "An OData $filter the query adds to every request.") var filter: String?

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let context = try SyncContext(directory: global.store, purpose: "tablesync query add")
            let query = try await context.addQuery(PullQuery(id: queryID, table: table, filter: filter))
            if global.json {
                CommandOutput.printJSON(["added": .string(query.id), "table": .string(query.table)])
            } else {
                print("Added query \(query.id) on table \(query.table).")
            }
            return .done
        }
    }
}

/// `tablesync query list`.
struct QueryListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the pull queries and their watermarks.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let context = try SyncContext(directory: global.store, mode: .readOnly)
            let queries = try await context.queries().sorted
            if global.json {
                CommandOutput.printJSON(["queries": .array(queries.map { query in
                    var members: [String: JSONValue] = ["id": .string(query.id), "table": .string(query.table)]
                    if let filter = query.filter { members["filter"] = .string(filter) }
                    if let updatedAt = query.updatedAt { members["updatedAt"] = .string(updatedAt) }
                    if let lastID = query.lastID { members["lastId"] = .string(lastID) }
                    return .object(members)
                })])
            } else if queries.isEmpty {
                print("No pull queries; add one with `tablesync query add TABLE QUERY_ID`.")
            } else {
                for query in queries {
                    let filter = query.filter.map { " filter \($0)" } ?? ""
                    print("\(query.id)\ttable \(query.table)\(filter)\tpulled up to \(query.updatedAt ?? "nothing yet")")
                }
            }
            return .done
        }
    }
}

/// `tablesync query remove QUERY_ID`.
struct QueryRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a pull query (its records stay).")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The query id.") var queryID: String

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let context = try SyncContext(directory: global.store, purpose: "tablesync query remove")
            try await context.removeQuery(id: queryID)
            if global.json {
                CommandOutput.printJSON(["removed": .string(queryID)])
            } else {
                print("Removed query \(queryID).")
            }
            return .done
        }
    }
}
