import SyncProtocol
import TableSyncStorage

/// The pull queries of `queries.json`: added by hand or on a pull's first use, their watermarks moved by pulls.
extension SyncContext {
    /// The pull queries of `queries.json`.
    package func queries() throws -> QueryRegistry {
        try QueryRegistry.load(from: try FileSystem.readFile(layout.queriesFile), file: StoreLayout.queriesFileName)
    }

    /// Adds a pull query to `queries.json`. Its watermark starts empty: the first pull fetches everything
    /// the query matches.
    @discardableResult
    package func addQuery(_ query: PullQuery) throws -> PullQuery {
        try requireWritable()
        try requireTable(query.table)
        if let problem = PullQuery.problem(withID: query.id) {
            throw StoreError.invalidQuery(id: query.id, reason: problem)
        }
        var registry = try queries()
        if registry.queries[query.id] != nil {
            throw StoreError.invalidQuery(id: query.id, reason: "a query with this id exists already")
        }
        var fresh = query
        fresh.updatedAt = nil
        fresh.lastID = nil
        registry.queries[query.id] = fresh
        try saveQueries(registry)
        return fresh
    }

    /// Removes a pull query; its records stay in the store.
    package func removeQuery(id: String) throws {
        try requireWritable()
        var registry = try queries()
        guard registry.queries.removeValue(forKey: id) != nil else {
            throw StoreError.invalidQuery(id: id, reason: "there is no such query")
        }
        try saveQueries(registry)
    }

    func saveQueries(_ registry: QueryRegistry) throws {
        var batch = DurableFileBatch()
        batch.write(CanonicalJSON.encode(registry.json), to: layout.queriesFile)
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
    }

    /// The query to pull with: the registered one, created on first use, or an unsaved one without id.
    func resolveQuery(id: String?, table: String, filter: String?) throws -> PullQuery {
        guard let id else { return PullQuery(id: "", table: table, filter: filter) }
        if let problem = PullQuery.problem(withID: id) { throw StoreError.invalidQuery(id: id, reason: problem) }
        if let existing = try queries().queries[id] {
            guard existing.table == table else {
                throw StoreError.invalidQuery(id: id, reason: "it pulls table \(existing.table), not \(table)")
            }
            if let filter, filter != existing.filter {
                throw StoreError.invalidQuery(
                    id: id,
                    reason:
                        """
                        it has the filter \(existing.filter.map { "\"\($0)\"" } ?? "(none)"); remove it and add it \
                        again to change the filter
                        """
                )
            }
            return existing
        }
        return try addQuery(PullQuery(id: id, table: table, filter: filter))
    }

    func saveQuery(_ query: PullQuery) throws {
        var registry = try queries()
        registry.queries[query.id] = query
        try saveQueries(registry)
    }
}
