import SyncProtocol

/// The contents of `queries.json`: every pull query by id.
///
/// ```json
/// {
///   "queries": {
///     "todo-all": {
///       "lastId": "a1",
///       "table": "todo",
///       "updatedAt": "2024-05-01T10:20:30.123Z"
///     }
///   }
/// }
/// ```
package struct QueryRegistry: Sendable, Equatable {
    /// The queries by id.
    package var queries: [String: PullQuery]

    /// A registry of `queries` by id.
    package init(queries: [String: PullQuery] = [:]) { self.queries = queries }

    /// The queries ordered by id.
    package var sorted: [PullQuery] { queries.sorted { $0.key < $1.key }.map(\.value) }

    static func load(from bytes: [UInt8], file: String) throws -> QueryRegistry {
        let reader = try SettingsReader(file: file, bytes: bytes)
        var queries: [String: PullQuery] = [:]
        for (id, entry) in try reader.objectMembers("queries") {
            if let problem = PullQuery.problem(withID: id) {
                throw entry.failure("", problem)
            }
            let table = try entry.string("table")
            if let problem = TableName.problem(with: table) { throw entry.failure("table", problem) }
            let updatedAt = try entry.optionalString("updatedAt")
            if let updatedAt, Timestamp(parsing: updatedAt) == nil {
                throw entry.failure("updatedAt", "\"\(updatedAt)\" is not an ISO 8601 date-time")
            }
            var skipped: [String: String] = [:]
            if let skippedReader = try entry.optionalObject("skipped") {
                for skippedID in skippedReader.members.keys { skipped[skippedID] = try skippedReader.string(skippedID) }
            }
            queries[id] = PullQuery(
                id: id, table: table, filter: try entry.optionalString("filter"),
                updatedAt: updatedAt, lastID: try entry.optionalString("lastId"), skipped: skipped)
        }
        return QueryRegistry(queries: queries)
    }

    var json: JSONValue {
        var entries: [String: JSONValue] = [:]
        for query in queries.values {
            var entry: [String: JSONValue] = ["table": .string(query.table)]
            if let filter = query.filter { entry["filter"] = .string(filter) }
            if let updatedAt = query.updatedAt { entry["updatedAt"] = .string(updatedAt) }
            if let lastID = query.lastID { entry["lastId"] = .string(lastID) }
            if !query.skipped.isEmpty { entry["skipped"] = .object(query.skipped.mapValues { .string($0) }) }
            entries[query.id] = .object(entry)
        }
        return ["queries": .object(entries)]
    }
}
