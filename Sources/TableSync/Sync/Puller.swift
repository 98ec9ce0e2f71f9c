import Logging
import SyncProtocol
import TableSyncStorage

/// What a pull did.
public struct PullReport: Sendable, Equatable {
    /// The table pulled.
    public var table = ""
    /// The push of the table's pending operations that came first.
    public var push = PushReport()
    /// Record files written, removed (deleted on the server), and already up to date.
    public var written = 0
    /// Record files removed because the server deleted the record (or, with `evict`, it left the query).
    public var removed = 0
    /// Records already up to date.
    public var unchanged = 0
    /// Records not overwritten because they have local changes waiting to be pushed.
    public var keptLocal = 0
    /// Of ``removed``, the records removed because they no longer match the query (`evict`).
    public var evicted = 0
    /// Pages fetched.
    public var pages = 0
    /// Records the server sent that the store cannot hold: left out and reported; the watermark moves past them.
    public var skipped: [SkippedServerRecord] = []
    /// The page size the pull asked for in the end: `--page-size` (or 1,000), or less when the server refused it.
    public var pageSize = 0
    /// Where the query stands now (`nil` for a pull without query id).
    package var watermark: PullWatermark?

    /// An empty report.
    package init() {}
}

/// A pull refused to remove more than half of a table's local records, or a push to delete more than half of
/// them on the server.
public struct MassDeleteRefused: CategorizedError, Equatable {
    /// Which way the records would have gone.
    package enum Side: Sendable, Equatable {
        /// A pull removing local records the server deleted.
        case pull
        /// A push sending deletes for record files that are gone.
        case push
        /// A restore or revert queuing deletes for records its source commit did not have.
        case restore
    }

    /// The table pulled or pushed.
    package let table: String
    /// How many records the run would have removed.
    package let removing: Int
    /// How many records the table holds locally.
    package let localRecords: Int
    /// The pull or the push.
    package var side: Side = .pull
    /// Always ``FailureKind/other``.
    public var kind: FailureKind { .other }
    /// The refusal, with the counts and how to allow it.
    public var description: String {
        switch side {
        case .pull:
            """
            the pull would remove \(removing) of the \(localRecords) local records of \(table); nothing more was \
            removed. Pull again allowing mass deletes if the server really deleted them.
            """
        case .push:
            """
            the push would delete \(removing) of the \(localRecords) records of \(table) on the server, because their \
            files are gone; nothing was sent. Restore the files (git checkout -- tables/\(table)), or push again \
            allowing mass deletes if they are really to be deleted.
            """
        case .restore:
            """
            undoing would delete \(removing) of the \(localRecords) records of \(table), which the commit it goes back \
            to did not have; nothing was queued. Run it again allowing mass deletes if they are really to be deleted.
            """
        }
    }
}

/// Fetches what changed since a query's watermark, page by page, making each page durable before the
/// watermark moves, so a killed pull resumes where it stopped.
struct Puller {
    let store: any PullingStore
    let connection: ServerConnection
    let options: SyncOptions

    static let defaultPageSize = 1000

    /// Pulls `table`; with `pushingFirst` (the default for a pull on its own) the table's pending operations and
    /// hand edits are pushed first. A sync, which has just pushed every table, pulls without pushing again.
    func pull(table: String, queryID: String?, filter: String?, pushingFirst: Bool = true) async throws -> PullReport {
        try await store.requireTable(table)
        var report = PullReport()
        report.table = table
        if pushingFirst {
            report.push = try await Pusher(
                store: store, connection: connection, policy: options.conflictPolicy ?? store.settings.conflictPolicy,
                options: options
            ).push(tables: [table])
        }
        let query = try await store.resolveQuery(id: queryID, table: table, filter: filter)
        let baseFilter = try query.filter.map { text in
            do { return try FilterParser.parse(text) } catch {
                throw LocalQueryError(reason: "$filter of the pull: \(error)")
            }
        }
        let client = try await connection.client(table: table)
        let mode = try await Self.pagingMode(options: options, connection: connection, client: client)
        // To evict, the pull must also see the records that changed so that they no longer match: it asks for
        // every change and applies the filter itself (FilterEvaluator agrees with the server's SQL).
        let evictFilter = options.evict ? baseFilter : nil
        let source = PageSource(
            client: client, connection: connection, table: table, mode: mode,
            serverFilter: evictFilter == nil ? baseFilter : nil)
        try await pullPages(
            from: source, query: query, saving: queryID != nil, evictFilter: evictFilter, report: &report)
        return report
    }

    /// Where a pull's pages come from: the table's client, and the query as the server is asked it.
    private struct PageSource: Sendable {
        let client: TableClient
        let connection: ServerConnection
        let table: String
        let mode: PullPlan.Mode
        let serverFilter: FilterExpression?

        /// The table's address, for errors.
        var url: String { client.http.baseURL + TablePath.table(table) }

        /// The page after `watermark` (and `skip` records), asked with `pageSize` records or fewer; `counting` also
        /// asks how many records are to come.
        func fetch(
            after watermark: PullWatermark?, skip: Int, pageSize: Int, counting: Bool = false
        ) async throws -> (page: ServerPage, pageSize: Int) {
            let count = counting ? PullPlan.countParameter(apiVersion: client.apiVersion) : nil
            return try await Puller.fetchPage(client: client, connection: connection, table: table, pageSize: pageSize)
            {
                size in
                PullPlan.query(
                    mode: mode, baseFilter: serverFilter, watermark: watermark, skip: skip, pageSize: size,
                    count: count,
                    dateTimes: PullPlan.dateTimeForm(apiVersion: client.apiVersion))
            }
        }
    }

    /// Pulls the pages of `source` from `query`'s watermark, each made durable with the watermark it reaches when
    /// `saving` (an incremental pull), until a page is the last; ``PullReport`` counts what they did.
    private func pullPages(
        from source: PageSource, query: PullQuery, saving: Bool, evictFilter: FilterExpression?,
        report: inout PullReport
    ) async throws {
        var position = PullPosition(query: query, mode: source.mode, saving: saving)
        // The first page also asks how many records are to come, for progress (one count on the server per pull).
        var (page, pageSize) = try await source.fetch(
            after: position.watermark, skip: position.skip, pageSize: options.pageSize ?? Self.defaultPageSize,
            counting: options.progress != nil)
        let total = page.totalCount
        // Nothing is pushed during the pull, so the records kept for their pending operation stay the same.
        let pendingIDs = await store.pendingIDs(table: source.table)
        // Three pages overlap: page N is committed on a task of its own while page N+1's files are written into
        // spares (staged) and page N+2 downloads.
        var commits = CommitSequence<PageCommit>()
        func merge(_ commit: PageCommit?) {
            if let commit { report.add(commit) }
        }
        do {
            while true {
                report.pages += 1
                if page.itemCount == 0 { break }
                let step = try position.move(past: page, url: source.url)
                let isLast = PullPlan.isLastPage(
                    apiVersion: source.client.apiVersion, itemCount: page.itemCount, pageSize: pageSize,
                    nextLink: page.nextLink)
                // The next page downloads and decodes while this one is written: the next cursor is known already.
                let (nextWatermark, nextSkip, nextSize) = (position.watermark, position.skip, pageSize)
                let nextPage =
                    isLast || !step.advances
                    ? nil : Task { try await source.fetch(after: nextWatermark, skip: nextSkip, pageSize: nextSize) }
                var changes = PageChanges(
                    page: page, number: report.pages, table: source.table, pendingIDs: pendingIDs,
                    evictFilter: evictFilter)
                changes.query = step.query
                do {
                    merge(try await commit(changes, table: source.table, total: total, into: &commits))
                } catch {
                    nextPage?.cancel()
                    _ = await nextPage?.result
                    throw error
                }
                if !step.advances {
                    merge(try await commits.finish())
                    throw Self.notAdvancing(from: position.watermark, url: source.url)
                }
                guard let nextPage else { break }
                (page, pageSize) = try await nextPage.value
            }
            merge(try await commits.finish())
        } catch {
            // No page is written after the pull has returned.
            await commits.settle()
            throw error
        }
        report.pageSize = pageSize
        report.watermark = saving ? position.watermark : nil
    }

    /// A keyset page that ends where the previous one ended: asking again would bring it back for ever.
    private static func notAdvancing(from watermark: PullWatermark?, url: String) -> SyncError {
        .malformedResponse(
            url: url,
            reason: "a page does not move past the previous one (updatedAt \(watermark?.updatedAt ?? "none")), "
                + "so the pull stopped instead of asking again")
    }

    /// One page, asked for with `pageSize` records or fewer: a server that refuses the size with 400 is asked
    /// again with the largest `$top` it names (``ProtocolHeader/maxTop``) or the next smaller step
    /// (``PullPlan/smallerPageSize(than:serverMaximum:)``). A refusal that stepping does not settle stops the pull:
    /// a refusal of the request as a whole when reads of the table fail too
    /// (``ServerConnection/requestRefusal(_:table:)``),
    /// the refusal of this query otherwise. Returns the page and the size it was asked with.
    static func fetchPage(
        client: TableClient, connection: ServerConnection, table: String, pageSize: Int,
        query: (Int) -> [(name: String, value: String)]
    ) async throws -> (page: ServerPage, pageSize: Int) {
        var size = pageSize
        while true {
            do {
                return (try await client.list(table: table, query: query(size)), size)
            } catch let refused as ListRefused {
                if refused.status == 400,
                    let smaller = PullPlan.smallerPageSize(than: size, serverMaximum: refused.maxTop)
                {
                    size = smaller
                    continue
                }
                if let refusal = try await connection.requestRefusal(client, table: table) { throw refusal }
                throw refused.syncError
            }
        }
    }

    /// Hands one page to `commits`: its files are staged (encoded and written into spares) at once, and committed
    /// once the previous page's commit has ended: removals checked against the mass-delete brake, the files put in
    /// place, the query's new watermark saved, and progress told. Returns the previous page's commit.
    private func commit(
        _ changes: PageChanges, table: String, total: Int?,
        into commits: inout CommitSequence<PageCommit>
    ) async throws -> PageCommit? {
        let store = self.store
        let allowMassDelete = options.allowMassDelete
        let progress = options.progress
        let logger = options.logger
        let spares = store.spareFiles
        return try await commits.append(
            stage: {
                var encoded = EncodedRecords(changes.writes)
                try encoded.stage(in: spares)
                return encoded
            },
            commit: { encoded, previous in
                var commit = PageCommit(changes, after: previous)
                if !allowMassDelete {
                    try commit.brake.admit(changes.removals, table: table, files: store.recordFiles)
                }
                commit.evicted = store.recordFiles.existingCount(table: table, ids: changes.evictions)
                let outcome = try await store.applySynced(
                    table: table, encoded: encoded, removals: changes.removals + changes.evictions,
                    guard: .unchangedSinceSync)
                commit.outcome = outcome
                if let query = changes.query { try await store.saveQuery(query) }
                logger.debug(
                    "pulled page",
                    metadata: [
                        "table": .string(table),
                        "page": .stringConvertible(commit.page),
                        "written": .stringConvertible(changes.writes.count),
                        "removed": .stringConvertible(changes.removals.count + changes.evictions.count),
                        "watermark": .string(changes.query?.updatedAt ?? "-")
                    ])
                progress?(.pulledPage(table: table, page: commit.page, records: commit.recordsSoFar, total: total))
                return commit
            })
    }

    /// How `options` page through a table on `client`'s server: as asked, or keyset paging when the server is a
    /// TableSync server (it advertises extensions) and the SDKs' algorithm otherwise: the same discovery
    /// (`GET /health`) the push uses for batches.
    static func pagingMode(
        options: SyncOptions, connection: ServerConnection, client: TableClient
    ) async throws -> PullPlan.Mode {
        switch options.paging {
        case .keyset: return .keyset
        case .greaterOrEqualWithSkip: return .greaterOrEqualWithSkip
        case .automatic: break
        }
        return try await connection.serverFeatures(client: client).isTableSyncServer ? .keyset : .greaterOrEqualWithSkip
    }
}
