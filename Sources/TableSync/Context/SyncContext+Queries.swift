import SyncProtocol

extension SyncContext {
    /// Adds a pull query to `queries.json`. Its watermark starts empty: the first pull fetches everything
    /// the query matches.
    @discardableResult
    public func addQuery(_ query: PullQuery) throws -> PullQuery {
        try requireWritable()
        try requireTable(query.table)
        if let problem = PullQuery.problem(withID: query.id) { throw StoreError.invalidQuery(id: query.id, reason: problem) }
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
    public func removeQuery(id: String) throws {
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
}
