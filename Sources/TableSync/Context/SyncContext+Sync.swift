import SyncProtocol
import TableSyncStorage

/// Push, pull and sync: the entry points, each handing the work to its type (``Pusher``, ``Puller``, ``Syncer``)
/// with this store as what they read and write, within the checks of the store's git state (``GitGuard``), and
/// trimming the spare files after.
extension SyncContext {
    /// Pushes pending operations (after queuing hand edits) in journal order; `tables` limits it to some tables.
    /// - Throws: ``SyncError`` when the server is unreachable, refuses the credentials or answers outside the
    ///   protocol; ``GitStateRefused`` before anything is sent when git is in the middle of an operation or `HEAD` is
    ///   behind the last sync; ``MassDeleteRefused`` when hand deletes would remove more than half of a table;
    ///   ``StoreError/readOnly``; ``FileSystemError`` when the disk fails. The journal keeps whatever was not applied.
    @discardableResult
    public func push(tables: Set<String>? = nil, options: SyncOptions = SyncOptions()) async throws -> PushReport {
        try await guardedByGit(options) {
            try await push(
                tables: tables, options: options,
                connection: ServerConnection(settings: settings, layout: layout, options: options))
        }
    }

    private func push(
        tables: Set<String>?, options: SyncOptions, connection: ServerConnection
    ) async throws -> PushReport {
        let pusher = Pusher(
            store: self, connection: connection, policy: options.conflictPolicy ?? settings.conflictPolicy,
            options: options)
        return try await releasingSpareFiles { try await pusher.push(tables: tables) }
    }

    /// Pulls `table`: first pushes its pending operations, then fetches what changed. With `queryID` the pull is
    /// incremental from the query's watermark in `queries.json` (the query is created on first use); without it,
    /// everything matching `filter` is fetched.
    /// - Throws: as ``push(tables:options:)``; ``StoreError/unknownTable(_:)``,
    ///   ``StoreError/invalidQuery(id:reason:)``; ``MassDeleteRefused`` when the pull would remove more than half of
    ///   the table and ``SyncOptions/allowMassDelete`` is false.
    @discardableResult
    public func pull(
        table: String, queryID: String? = nil, filter: String? = nil, options: SyncOptions = SyncOptions()
    ) async throws -> PullReport {
        try await guardedByGit(options) {
            let puller = Puller(
                store: self, connection: ServerConnection(settings: settings, layout: layout, options: options),
                options: options)
            return try await releasingSpareFiles {
                try await puller.pull(table: table, queryID: queryID, filter: filter)
            }
        }
    }

    /// Pushes, then pulls every query of `queries.json` in id order: the command for cron.
    /// The server's features are asked while the push scans the store, and once for the whole sync.
    /// - Throws: as ``push(tables:options:)`` and ``pull(table:queryID:filter:options:)``.
    public func sync(options: SyncOptions = SyncOptions()) async throws -> SyncReport {
        try await sync(pullingTables: nil, options: options)
    }

    /// Pushes, then pulls the queries of `pullingTables` (all of them when `nil`): what `watch` runs when the
    /// server's change feed names some tables.
    /// - Throws: as ``sync(options:)``.
    package func sync(pullingTables: Set<String>?, options: SyncOptions) async throws -> SyncReport {
        try await guardedByGit(options) {
            let connection = ServerConnection(settings: settings, layout: layout, options: options)
            return try await connection.preparing {
                let report = try await push(tables: nil, options: options, connection: connection)
                let syncer = Syncer(store: self, connection: connection, options: options)
                let queries = try queries().sorted.filter { pullingTables?.contains($0.table) ?? true }
                return try await releasingSpareFiles { try await syncer.pullAll(queries, after: report) }
            }
        }
    }

    /// Runs `operation` (a push, a pull, a sync) once ``GitGuard`` lets it, with the git baseline read for the check
    /// kept for the scan, and remembers `HEAD` as the last sync's commit when it ends, whether it succeeds or fails:
    /// what it sent was sent from that commit.
    private func guardedByGit<Result: Sendable>(
        _ options: SyncOptions, _ operation: () async throws -> Result
    ) async throws -> Result {
        try requireWritable()
        let baseline = try gitBaseline()
        try GitGuard.check(baseline, allowingOlderHead: options.allowOlderHead)
        operationBaseline = baseline
        defer { operationBaseline = nil }
        do {
            let result = try await operation()
            try recordSyncedHead(baseline?.head)
            try recordSyncedTrees()
            return result
        } catch {
            try? recordSyncedHead(baseline?.head)
            throw error
        }
    }
}

/// The push and the pull reach the store through the few requirements they name.
extension SyncContext: PullingStore {}
