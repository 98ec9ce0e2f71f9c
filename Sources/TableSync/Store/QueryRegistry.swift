import SyncProtocol

/// One incremental pull query of `queries.json`: its table, its filter, and how far it has pulled.
public struct PullQuery: Sendable, Equatable {
    /// The query id (the .NET SDK's rule: no `|`, at most 255 characters).
    public var id: String
    /// The table it pulls.
    public var table: String
    /// The OData `$filter` it adds to every request, if any.
    public var filter: String?
    /// The `updatedAt` of the last record pulled, exactly as the server wrote it.
    public var updatedAt: String?
    /// The id of the last record pulled at ``updatedAt``: the keyset cursor's tie-break.
    public var lastID: String?
    /// Records the server sent that the store cannot hold, by id, with why: the watermark moved past them, so
    /// they are kept here for `status` until the server sends them again valid or deleted, or a purge resets
    /// the query.
    public var skipped: [String: String]

    /// A query `id` pulling `table`, optionally filtered, from a watermark (`nil`: from the start).
    public init(id: String, table: String, filter: String? = nil, updatedAt: String? = nil, lastID: String? = nil,
                skipped: [String: String] = [:]) {
        self.id = id
        self.table = table
        self.filter = filter
        self.updatedAt = updatedAt
        self.lastID = lastID
        self.skipped = skipped
    }

    /// Notes what `page` says of skipped records: refused ones are added (or forgotten when deleted on the server),
    /// and ones that came back valid are forgotten.
    mutating func noteSkipped(_ page: ServerPage) {
        for item in page.refused {
            guard let id = item.id else { continue }
            skipped[id] = item.deleted ? nil : item.reason
        }
        guard !skipped.isEmpty else { return }
        for record in page.records {
            if let id = record[SystemProperty.id]?.stringValue { skipped[id] = nil }
        }
    }

    /// Why `id` is not a valid query id, or `nil`.
    public static func problem(withID id: String) -> String? {
        if id.isEmpty { return "a query id cannot be empty" }
        if id.count > 255 { return "a query id has at most 255 characters" }
        if id.contains("|") { return "a query id cannot contain '|'" }
        if id.containsControlCharacter {
            return "a query id cannot contain control characters"
        }
        return nil
    }
}

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
public struct QueryRegistry: Sendable, Equatable {
    /// The queries by id.
    public var queries: [String: PullQuery]

    /// A registry of `queries` by id.
    public init(queries: [String: PullQuery] = [:]) { self.queries = queries }

    /// The queries ordered by id.
    public var sorted: [PullQuery] { queries.keys.sorted().map { queries[$0]! } }

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
            queries[id] = PullQuery(id: id, table: table, filter: try entry.optionalString("filter"),
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
