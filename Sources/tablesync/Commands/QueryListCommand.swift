import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync query list`.
struct QueryListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the pull queries and their watermarks.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, mode: .readOnly)
        let queries = try await context.queries().sorted
        if global.json {
            CommandOutput.printJSON([
                "queries": .array(
                    queries.map { query in
                        var members: [String: JSONValue] = ["id": .string(query.id), "table": .string(query.table)]
                        if let filter = query.filter { members["filter"] = .string(filter) }
                        if let updatedAt = query.updatedAt { members["updatedAt"] = .string(updatedAt) }
                        if let lastID = query.lastID { members["lastId"] = .string(lastID) }
                        return .object(members)
                    })
            ])
        } else if queries.isEmpty {
            CommandOutput.printText("No pull queries; add one with `tablesync query add TABLE QUERY_ID`.")
        } else {
            for query in queries {
                let filter = query.filter.map { " filter \($0)" } ?? ""
                CommandOutput.printText(
                    "\(query.id)\ttable \(query.table)\(filter)\tpulled up to \(query.updatedAt ?? "nothing yet")")
            }
        }
    }
}
