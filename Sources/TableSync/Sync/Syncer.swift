import SyncProtocol

/// A sync after its push: pulls every query of `queries.json` in id order. The push has just sent every pending
/// operation and queued every hand edit, so the pulls do not push (and scan for hand edits) once more each.
struct Syncer {
    let store: any PullingStore
    let connection: ServerConnection
    let options: SyncOptions

    /// The sync's report: `push`, then one pull per query.
    func pullAll(_ queries: [PullQuery], after push: PushReport) async throws -> SyncReport {
        var report = SyncReport()
        report.push = push
        for query in queries {
            report.pulls[query.id] = try await Puller(store: store, connection: connection, options: options)
                .pull(table: query.table, queryID: query.id, filter: nil, pushingFirst: false)
        }
        return report
    }
}

/// What a sync did: the push, then each query's pull.
public struct SyncReport: Sendable, Equatable {
    /// The push that came first.
    public var push = PushReport()
    /// Each query's pull, by query id.
    public var pulls: [String: PullReport] = [:]
    /// An empty report.
    package init() {}
}
