import SyncProtocol

/// Push, pull and sync: the entry points, each handing the work to its type (``Pusher``, ``Puller``, ``Syncer``)
/// with this store as what they read and write, and trimming the spare files after.
extension SyncContext {
    /// Pushes pending operations (after queuing hand edits) in journal order; `tables` limits it to some tables.
    /// Throws ``SyncError`` when the server is unreachable or refuses the credentials; the journal keeps
    /// everything not yet applied.
    @discardableResult
    public func push(tables: Set<String>? = nil, options: SyncOptions = SyncOptions()) async throws -> PushReport {
        try await push(tables: tables, options: options, connection: ServerConnection(settings: settings, layout: layout, options: options))
    }

    private func push(tables: Set<String>?, options: SyncOptions, connection: ServerConnection) async throws -> PushReport {
        try requireWritable()
        try GitGuard.check(try gitBaseline(), allowingOlderHead: options.allowOlderHead)
        let pusher = Pusher(store: self, connection: connection, policy: options.conflictPolicy ?? settings.conflictPolicy, options: options)
        return try await recordingSyncedHead { try await releasingSpareFiles { try await pusher.push(tables: tables) } }
    }

    /// Pulls `table`: first pushes its pending operations, then fetches what changed. With `queryID` the pull is
    /// incremental from the query's watermark in `queries.json` (the query is created on first use); without it,
    /// everything matching `filter` is fetched.
    @discardableResult
    public func pull(table: String, queryID: String? = nil, filter: String? = nil, options: SyncOptions = SyncOptions()) async throws -> PullReport {
        try requireWritable()
        try GitGuard.check(try gitBaseline(), allowingOlderHead: options.allowOlderHead)
        let puller = Puller(store: self, connection: ServerConnection(settings: settings, layout: layout, options: options), options: options)
        return try await recordingSyncedHead { try await releasingSpareFiles { try await puller.pull(table: table, queryID: queryID, filter: filter) } }
    }

    /// Pushes, then pulls every query of `queries.json` in id order: the command for cron.
    /// The server's features are asked while the push scans the store, and once for the whole sync.
    public func sync(options: SyncOptions = SyncOptions()) async throws -> SyncReport {
        let connection = ServerConnection(settings: settings, layout: layout, options: options)
        connection.prepare()
        let report = try await push(tables: nil, options: options, connection: connection)
        let syncer = Syncer(store: self, connection: connection, options: options)
        let queries = try queries().sorted
        return try await recordingSyncedHead { try await releasingSpareFiles { try await syncer.pullAll(queries, after: report) } }
    }
}
