import SyncProtocol
import TableSyncStorage

/// What a push did.
public struct PushReport: Sendable, Equatable {
    /// Operations the server applied (lost acknowledgements included).
    public var applied = 0
    /// Operations refused because the server's copy changed, now under `conflicts/`.
    public var conflicts: [RecordKey] = []
    /// Operations refused for another reason (a 4xx), also under `conflicts/`.
    public var rejected: [RecordKey] = []
    /// Conflicts settled by the `server-wins` or `client-wins` policy.
    public var settledByPolicy = 0
    /// Operations not sent because a conflict on their record waits for a decision.
    public var waiting: [RecordKey] = []
    /// Operations another clone of the store queued, which came with a merge: left for that clone to send
    /// (``PendingOperation/origin``).
    package var queuedElsewhere: [RecordKey] = []
    /// Files skipped because they are broken.
    public var problems: [RecordFileProblem] = []
    /// Files editors and merge tools left beside record files, ignored (``LocalScan/leftovers``).
    package var leftovers: [String] = []
    /// Requests made for operations, and the body bytes they moved (compressed sizes where compressed).
    package var traffic = WireTraffic()
    /// `true` when the operations went through the batch extension.
    package var batched = false
    /// Files compared with the server before anything was sent, because this store had never synced them.
    package var adoption = AdoptionReport()
    /// Files stamped as the server's copies that the stat index did not know (a clone, a lost cache, a merge),
    /// indexed without a request.
    package var indexedCopies = 0

    /// The files of the store a commit after this push leaves out, relative to the store: those it could not read
    /// (a commit would spread them to every clone) and the leftovers of editors and merge tools.
    package var pathsToLeaveOutOfCommits: [String] { problems.map(\.path) + leftovers }

    /// Requests made for operations (one per operation, or one per batch).
    package var requests: Int { traffic.requests }

    /// An empty report.
    package init() {}
}

/// Sends pending operations in journal order and reconciles each answer: write-back, conflicts, policies.
///
/// push = hand-edit scan → the journal's (collapsed) operations → batches → send → reconcile each outcome →
/// checkpoint. Against a server offering the batch extension, a batch carries up to `batchMaxOperations`
/// operations in one gzip-compressed request and a checkpoint follows each batch; otherwise every operation is
/// its own request (a batch of one) and a checkpoint follows every `checkpointInterval` operations. Both ways
/// classify, retry (`client-wins`) and reconcile through the same functions, the steps of a ``PushRun``.
/// Checkpoints record settled operations in the settled log; the push ends by rewriting `journal.jsonl` once
/// (``Journal``).
struct Pusher {
    let store: any PushingStore
    let connection: ServerConnection
    let policy: StoreSettings.ConflictPolicy
    let options: SyncOptions
    /// Operations between two durable checkpoints (write-backs, then journal) when sending one request each.
    var checkpointInterval = 200

    /// After this many operations in a row that the server fails on, the push stops: the server is failing writes
    /// as a whole, not one record.
    static let faultsInARowLimit = 10

    /// How this push sends: which sender, how many operations and bytes share a request.
    struct Route {
        let client: TableClient
        let sender: any OperationSender
        let maxOperations: Int
        let maxBytes: Int
        let batched: Bool
        /// The most bytes of one operation the server takes in a request, when it announces its limit.
        var serverLimit: Int?
    }

    /// How many files the hand-edit scan hands over as read: 20,000 records of about a kilobyte each (a push of
    /// more reads the rest again rather than hold them all in memory).
    static let readsKept = 20_000

    func push(tables: Set<String>?) async throws -> PushReport {
        var report = PushReport()
        var (queue, reads) = try await operationsToSend(tables: tables, report: &report)
        guard !queue.isEmpty else { return report }
        let route = try await chooseRoute(client: try await connection.client(table: queue[0].table))
        report.batched = route.batched
        return try await send(queue, reads: &reads, route: route, report: report)
    }

    /// The operations this push sends, in journal order, once hand edits are queued, files only the server can
    /// tell about are compared with it, and records to bring back are undeleted; with the record files the scan
    /// read, for sending. What waits on a conflict or was queued by another clone goes into `report` instead.
    private func operationsToSend(
        tables: Set<String>?, report: inout PushReport
    ) async throws
        -> (queue: [PendingOperation], reads: ReadRecordFiles)
    {
        let recorded = try await store.recordHandEdits(
            keepingReadsUpTo: Self.readsKept, allowingMassDelete: options.allowMassDelete, scope: options.scanScope)
        report.problems = recorded.scan.problems
        report.leftovers = recorded.scan.leftovers
        report.indexedCopies = recorded.scan.serverCopyCounts.values.reduce(0, +)
        // Files to compare with the server first, and files that hold content while a delete is pending.
        let toCompare = recorded.scan.changes.filter { change in
            (tables?.contains(change.table) ?? true)
                && [.uncompared, .removedByGit, .missing, .deleteConflict].contains(change.kind)
        }
        if !toCompare.isEmpty {
            report.adoption = try await Adopter(
                store: store, connection: connection, policy: policy, options: options,
                position: recorded.scan.headPosition, appliedFiles: await store.appliedFiles()
            ).adopt(toCompare)
        }
        let waiting = Set(try await store.conflictKeys())
        let sender = store.clone.sender
        var queue: [PendingOperation] = []
        for operation in await store.pendingOperations where tables?.contains(operation.table) ?? true {
            if waiting.contains(operation.key) {
                report.waiting.append(operation.key)
            } else if !operation.isSent(by: sender) {
                report.queuedElsewhere.append(operation.key)
            } else {
                queue.append(operation)
            }
        }
        if queue.contains(where: { $0.operationID != nil }) { try await store.noteCommittedOperations() }
        if queue.contains(where: \.undelete) {
            let revived = try await Undeleter(store: store, connection: connection).undelete(queue, report: &report)
            queue = queue.compactMap { operation in revived[operation.sequence] ?? operation }
        }
        return (queue, recorded.reads)
    }

    /// Sends `queue` on `route` and reconciles the answers, in a ``PushRun`` that owns what the sending changes:
    /// one request per operation, or batches of which the next is on the wire while the previous answer is
    /// reconciled and a batch's checkpoint is made while the next batch is prepared (three batches overlap). On
    /// failure, what was reconciled is made durable before the error goes on. Returns `report` with what was sent.
    private func send(
        _ queue: [PendingOperation], reads: inout ReadRecordFiles, route: Route, report: PushReport
    ) async throws -> PushReport {
        var run = PushRun(pusher: self, route: route, report: report, total: queue.count)
        do {
            var start = 0
            while start < queue.count {
                let window = queue[start..<min(start + route.maxOperations, queue.count)]
                start = window.endIndex
                let prepared = try await run.prepare(window, reads: &reads)
                let sizes = prepared.map { ($0.batchMember?.count ?? 0) + 1 }
                for range in BatchSplit.ranges(
                    sizes: sizes, maxOperations: route.maxOperations, maxBytes: route.maxBytes)
                {
                    try await run.send(Array(prepared[range]))
                }
            }
        } catch {
            try await run.abandon()
            throw error
        }
        return try await run.finish()
    }

    /// Batches when the options allow it and the server offers the extension (one `GET /health` to learn it);
    /// one request per operation otherwise.
    private func chooseRoute(client: TableClient) async throws -> Route {
        let single = Route(
            client: client, sender: SingleRequestSender(client: client), maxOperations: 1, maxBytes: .max,
            batched: false)
        guard options.batch else { return single }
        let features = try await connection.serverFeatures(client: client)
        guard features.extensions.contains(.batch) else { return single }
        var maxOperations = options.batchMaxOperations
        var maxBytes = options.batchMaxBytes
        if let limits = features.batchLimits {
            maxOperations = min(maxOperations, limits.maxOperations)
            // Room for the envelope around the operations.
            maxBytes = min(maxBytes, max(1, limits.maxBytes - 64))
        }
        let gzipLevel = features.extensions.contains(.gzipRequests) ? options.compressionLevel : nil
        let sender = BatchSender(
            client: client, gzipLevel: gzipLevel, minimalAnswers: features.extensions.contains(.batchMinimalAnswers))
        return Route(
            client: client, sender: sender, maxOperations: max(1, maxOperations),
            maxBytes: max(1, maxBytes), batched: true,
            serverLimit: features.batchLimits.map { max(1, $0.maxBytes - 64) })
    }

    /// Sends `operations` again after the server failed on them: each alone when it answered them one by one, and
    /// when it refused their batch as a whole (`refusedAsAWhole`), in two halves, each halved again while the server
    /// refuses it whole, so that the record it cannot take ends up alone in a few requests rather than one request
    /// per operation of the batch.
    func resending(
        _ operations: [OutgoingOperation], route: Route, refusedAsAWhole: Bool
    ) async throws
        -> (outcomes: [PushOutcome], traffic: WireTraffic)
    {
        guard refusedAsAWhole, operations.count > 1 else {
            return try await SingleRequestSender(client: route.client).send(operations)
        }
        var outcomes: [PushOutcome] = []
        var traffic = WireTraffic()
        let half = operations.count / 2
        for part in [Array(operations[..<half]), Array(operations[half...])] {
            let answered = try await route.sender.send(part)
            traffic += answered.traffic
            let faulted = answered.outcomes.indices.filter {
                if case .serverFault = answered.outcomes[$0] { true } else { false }
            }
            var partOutcomes = answered.outcomes
            if !faulted.isEmpty {
                let again = try await resending(
                    faulted.map { part[$0] }, route: route, refusedAsAWhole: faulted.count == part.count)
                traffic += again.traffic
                for (index, outcome) in zip(faulted, again.outcomes) { partOutcomes[index] = outcome }
            }
            outcomes += partOutcomes
        }
        return (outcomes, traffic)
    }

    /// `outcomes` with each ``PushOutcome/serverCopyNeeded(status:)`` decided on the record as the server has it
    /// (one `GET` each; only servers whose refusals do not carry their copy need them), and each refusal of an
    /// insert or update because the record is gone given the deleted record's copy, when the server keeps one, so
    /// that keeping the local side can bring it back.
    func readingServerCopies(
        _ operations: [OutgoingOperation], _ outcomes: [PushOutcome],
        client: TableClient
    ) async throws -> [PushOutcome] {
        var decided = outcomes
        for (index, outcome) in outcomes.enumerated() {
            let operation = operations[index].operation
            switch outcome {
            case .serverCopyNeeded(let status):
                let copy = try await client.serverCopy(table: operation.table, id: operation.id)
                decided[index] = PushOutcome.classify(
                    kind: operation.kind, sent: operations[index].sent, refusedWith: status, serverCopy: copy)
            case .conflict(let status, server: nil) where operation.kind != .delete:
                // Gone: the deleted record's copy, when the server keeps one, is what a person can bring back.
                if let tombstone = try await client.serverCopy(table: operation.table, id: operation.id) {
                    decided[index] = .conflict(status: status, server: tombstone)
                }
            default:
                continue
            }
        }
        return decided
    }

    /// Under `client-wins`, a conflict with a live server copy is settled by sending the operation again on the
    /// server's version (an insert becomes an update).
    func clientWinsRetry(_ outgoing: OutgoingOperation, _ outcome: PushOutcome) -> OutgoingOperation? {
        guard policy == .clientWins else { return nil }
        return Self.retried(outgoing, over: outcome)
    }

    /// A conflict whose live server copy holds what `HEAD` holds for the record (`committed`) is no conflict: the
    /// server applied content this clone committed (another clone of the repository sent it, as a cron job does
    /// with an edit pushed to git unsynced), and the local change was made over that content, so it goes out again
    /// on the server's version. Whatever the policy; a third party's change never holds `HEAD`'s content.
    func ownCommitRetry(
        _ outgoing: OutgoingOperation, _ outcome: PushOutcome, committed: [RecordKey: [String: JSONValue]]
    ) -> OutgoingOperation? {
        guard case .conflict(_, let server?) = outcome, let content = committed[outgoing.operation.key],
            server.content == content
        else { return nil }
        return Self.retried(outgoing, over: outcome)
    }

    /// The keys of the conflicts among `outcomes` that ``ownCommitRetry(_:_:committed:)`` looks at in `HEAD`.
    static func liveConflicts(_ operations: [OutgoingOperation], _ outcomes: [PushOutcome]) -> [RecordKey] {
        zip(operations, outcomes).compactMap { outgoing, outcome in
            guard case .conflict(_, let server?) = outcome, !server.deleted else { return nil }
            return outgoing.operation.key
        }
    }

    /// `outgoing` again on the version of the live server copy `outcome`'s conflict carries (an insert becomes an
    /// update); `nil` for any other outcome.
    private static func retried(_ outgoing: OutgoingOperation, over outcome: PushOutcome) -> OutgoingOperation? {
        guard case .conflict(_, let server) = outcome, let server, !server.deleted, let serverVersion = server.version
        else { return nil }
        var retried = outgoing
        if retried.operation.kind == .insert { retried.operation.kind = .update }
        retried.baseVersion = serverVersion
        return retried
    }
}
