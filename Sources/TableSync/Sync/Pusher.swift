import Logging
import SyncProtocol

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
    /// Requests made for operations, and the body bytes they moved (compressed sizes where compressed).
    package var traffic = WireTraffic()
    /// `true` when the operations went through the batch extension.
    package var batched = false
    /// Files compared with the server before anything was sent, because this store had never synced them.
    package var adoption = AdoptionReport()
    /// Files stamped as the server's copies that the stat index did not know (a clone, a lost cache, a merge),
    /// indexed without a request.
    package var indexedCopies = 0

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
/// classify, retry (`client-wins`) and reconcile through the same functions. Checkpoints record settled
/// operations in the settled log; the push ends by rewriting `journal.jsonl` once (``Journal``).
struct Pusher {
    let store: any PushingStore
    let connection: ServerConnection
    let policy: StoreSettings.ConflictPolicy
    let options: SyncOptions
    /// Operations between two durable checkpoints (write-backs, then journal) when sending one request each.
    var checkpointInterval = 200

    private struct Pending {
        var writeBacks: [String: [ServerRecord]] = [:]
        /// The write-backs encoded and written into spare files ahead of the checkpoint, by table.
        var stagedWriteBacks: [String: EncodedRecords] = [:]
        var sentFiles: [String: [String: SentFile]] = [:]
        var serverCopies: [String: [ServerRecord]] = [:]
        var removals: [String: [String]] = [:]
        var done: Set<Int64> = []
        var isEmpty: Bool { done.isEmpty }

        /// Encodes the write-backs and writes them into spare files, ahead of the checkpoint. A failed write
        /// fails the push as it would have failed the checkpoint; what was staged before it goes back.
        mutating func stageWriteBacks(in spares: SpareFiles) throws {
            for (table, records) in writeBacks {
                var encoded = EncodedRecords(records)
                do {
                    try encoded.stage(in: spares)
                } catch {
                    returnStaged(to: spares)
                    throw error
                }
                stagedWriteBacks[table] = encoded
            }
        }

        /// Gives the staged spare files back, for a checkpoint that will not be made.
        func returnStaged(to spares: SpareFiles) {
            for encoded in stagedWriteBacks.values { spares.keep(encoded.stagedFiles) }
        }
    }

    /// What the push learned of its tables: those where the server applied an operation or answered a read, so
    /// a refusal there concerns a record, not the request (``TableClient/requestRefusal(table:)``).
    private struct Acceptance {
        var tables: Set<String> = []
        /// Operations set aside in a row because the server failed on them (``setAside``).
        var faultsInARow = 0
    }

    /// After this many operations in a row that the server fails on, the push stops: the server is failing writes
    /// as a whole, not one record.
    static let faultsInARowLimit = 10

    /// How this push sends: which sender, how many operations and bytes share a request.
    private struct Route {
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
        try await send(queue, reads: &reads, route: route, report: &report)
        return report
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
            keepingReadsUpTo: Self.readsKept, allowingMassDelete: options.allowMassDelete)
        report.problems = recorded.scan.problems
        report.indexedCopies = recorded.scan.serverCopies.values.reduce(0) { $0 + $1.count }
        // Files to compare with the server first, and files that hold content while a delete is pending.
        let toCompare = recorded.scan.changes.filter { change in
            (tables?.contains(change.table) ?? true)
                && [.uncompared, .removedByGit, .missing, .deleteConflict].contains(change.kind)
        }
        if !toCompare.isEmpty {
            report.adoption = try await Adopter(
                store: store, connection: connection, policy: policy, options: options,
                position: recorded.scan.headPosition
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

    /// Sends `queue` on `route` and reconciles the answers: one request per operation, or batches of which the
    /// next is on the wire while the previous answer is reconciled and a batch's checkpoint is made while the next
    /// batch is prepared (three batches overlap). On failure, what was reconciled is made durable before the error
    /// goes on.
    private func send(
        _ queue: [PendingOperation], reads: inout ReadRecordFiles, route: Route,
        report: inout PushReport
    ) async throws {
        var pending = Pending()
        var acceptance = Acceptance()
        // Operations answered so far, for progress: each counts once, however it ended (a client-wins retry too).
        var settled = 0
        var inFlight: (operations: [OutgoingOperation], answer: Task<SenderAnswer, any Error>)?
        var committing = CommitSequence<Void>()
        do {
            var start = 0
            while start < queue.count {
                let window = queue[start..<min(start + route.maxOperations, queue.count)]
                start = window.endIndex
                let prepared = try await prepare(window, reads: &reads, route: route, report: &report)
                let sizes = prepared.map { ($0.batchMember?.count ?? 0) + 1 }
                for range in BatchSplit.ranges(
                    sizes: sizes, maxOperations: route.maxOperations, maxBytes: route.maxBytes)
                {
                    let operations = Array(prepared[range])
                    let sender = route.sender
                    let answer = Task { try await sender.send(operations) }
                    guard route.batched else {
                        try await exchange(
                            operations, answer: answer, route: route, report: &report, pending: &pending,
                            acceptance: &acceptance)
                        settled += operations.count
                        if pending.done.count >= checkpointInterval {
                            try await checkpoint(&pending)
                            options.progress?(.pushed(settled: settled, total: queue.count))
                        }
                        continue
                    }
                    let previous = inFlight
                    inFlight = (operations, answer)
                    if let previous {
                        try await finishBatch(
                            previous, route: route, report: &report, pending: &pending, acceptance: &acceptance,
                            committing: &committing)
                        settled += previous.operations.count
                        options.progress?(.pushed(settled: settled, total: queue.count))
                    }
                }
            }
            if let last = inFlight {
                inFlight = nil
                try await finishBatch(
                    last, route: route, report: &report, pending: &pending, acceptance: &acceptance,
                    committing: &committing)
                settled += last.operations.count
                options.progress?(.pushed(settled: settled, total: queue.count))
            }
            try await committing.finish()
        } catch {
            // A batch still in flight is abandoned: if the server applies it anyway, its operations are still in
            // the journal, and the next push's lost-acknowledgement rule counts them as applied.
            inFlight?.answer.cancel()
            _ = await inFlight?.answer.result
            // A checkpoint under way ends first (its failure may be the error at hand); what was reconciled since
            // is made durable after it.
            await committing.settle()
            try await checkpoint(&pending)
            // The push's own error is the one to report; a journal left unrewritten is rewritten on the next open.
            try? await store.saveJournal()
            throw error
        }
        try await checkpoint(&pending)
        try await store.saveJournal()
    }

    /// The operations of `window` as they go out on `route`: each with its record file's content (from `reads`
    /// when the scan kept it) and, batched, encoded as a batch member; one larger than the server takes is set
    /// aside, and one with nothing left to send (``prepare(_:scanned:report:)``) is left out.
    private func prepare(
        _ window: ArraySlice<PendingOperation>, reads: inout ReadRecordFiles, route: Route,
        report: inout PushReport
    ) async throws -> [OutgoingOperation] {
        var prepared: [OutgoingOperation] = []
        for operation in window {
            guard var outgoing = try prepare(operation, scanned: reads.take(operation.key), report: &report) else {
                continue
            }
            if route.batched {
                outgoing.encodeBatchMember(apiVersion: route.client.apiVersion)
                if let limit = route.serverLimit, let size = outgoing.batchMember?.count, size > limit {
                    try await setAsideTooLarge(outgoing, size: size, limit: limit, report: &report)
                    continue
                }
            }
            prepared.append(outgoing)
        }
        return prepared
    }

    typealias SenderAnswer = (outcomes: [PushOutcome], traffic: WireTraffic)

    /// Reconciles a batch's answer and hands it to a task that stages its write-back (``Pending/stageWriteBacks(in:)``)
    /// beside the previous batch's checkpoint (`committing`), then makes its own once that one has ended:
    /// checkpoints stay in batch order. Returns when the previous checkpoint has ended; the caller prepares the
    /// next batch while this one's is made.
    private func finishBatch(
        _ batch: (operations: [OutgoingOperation], answer: Task<SenderAnswer, any Error>), route: Route,
        report: inout PushReport, pending: inout Pending, acceptance: inout Acceptance,
        committing: inout CommitSequence<Void>
    ) async throws {
        try await exchange(
            batch.operations, answer: batch.answer, route: route, report: &report, pending: &pending,
            acceptance: &acceptance)
        let reconciled = pending
        pending = Pending()
        let spares = store.spareFiles
        _ = try await committing.append(
            stage: {
                var staged = reconciled
                try staged.stageWriteBacks(in: spares)
                return staged
            },
            commit: { [self] staged, _ in
                var staged = staged
                try await checkpoint(&staged)
            },
            unstage: { staged in staged.returnStaged(to: spares) })
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

    /// The operation with the content it sends: its record file as it is now. `nil` when there is nothing to
    /// send (the file is broken, reported in `report`, or vanished after the scan: the next push queues its delete).
    private func prepare(
        _ operation: PendingOperation, scanned: ReadRecordFile?, report: inout PushReport
    ) throws -> OutgoingOperation? {
        guard operation.kind != .delete else {
            return OutgoingOperation(operation: operation, sent: nil, sentFile: nil, baseVersion: operation.baseVersion)
        }
        let file: (loaded: RecordFile.Loaded, sent: SentFile)?
        do {
            file = try store.recordFiles.toSend(table: operation.table, id: operation.id, scanned: scanned)
        } catch let error as StoreError {
            if case .brokenRecordFile(let problem) = error { report.problems.append(problem) }
            return nil
        }
        guard let file else { return nil }
        return OutgoingOperation(
            operation: operation, sent: ServerRecord.content(file.loaded.record),
            sentFile: file.sent, baseVersion: operation.baseVersion)
    }

    /// Takes the answer to `operations` (sent already), reads the records whose refusal came without the
    /// server's copy, sends again on the server's version those that `client-wins` settles, and reconciles every
    /// outcome in order.
    private func exchange(
        _ operations: [OutgoingOperation], answer: Task<SenderAnswer, any Error>, route: Route,
        report: inout PushReport, pending: inout Pending, acceptance: inout Acceptance
    ) async throws {
        let answered = try await answer.value
        var outcomes = try await readingServerCopies(operations, answered.outcomes, client: route.client)
        report.traffic += answered.traffic
        report.traffic += try await settlingServerFaults(operations, &outcomes, route: route, acceptance: &acceptance)
        let retries = operations.indices.compactMap { index in
            clientWinsRetry(operations[index], outcomes[index]).map { (index, $0) }
        }
        if !retries.isEmpty {
            let (sentAgain, retryTraffic) = try await route.sender.send(retries.map(\.1))
            let again = try await readingServerCopies(retries.map(\.1), sentAgain, client: route.client)
            report.traffic += retryTraffic
            for ((index, _), outcome) in zip(retries, again) {
                outcomes[index] = outcome
                if case .applied = outcome { report.settledByPolicy += 1 }
            }
        }
        options.logger.debug(
            "pushed",
            metadata: [
                "operations": .stringConvertible(operations.count),
                "batched": .stringConvertible(route.batched),
                "outcomes": .string(PushOutcome.tally(outcomes))
            ])
        for (outgoing, outcome) in zip(operations, outcomes) {
            try await checkRefusal(outgoing, outcome, client: route.client, acceptance: &acceptance)
            try await reconcile(outgoing, outcome, report: &report, pending: &pending)
        }
    }

    /// Files a record larger than the server takes (the limit its `/health` announces) as refused, without sending
    /// it: sent, its batch would be refused as a whole.
    private func setAsideTooLarge(
        _ outgoing: OutgoingOperation, size: Int, limit: Int, report: inout PushReport
    ) async throws {
        let key = outgoing.operation.key
        try await store.writeConflict(
            ConflictRecord(
                operation: outgoing.operation, local: outgoing.sent, server: nil, status: nil,
                reason:
                    "set aside: the record is \(size) bytes, more than the \(limit) the server takes in a request (its /health); make it smaller, then send it again with tablesync resolve \(key) --keep-local"
            ))
        report.rejected.append(key)
    }

    /// Sends again alone, with the retries, each operation the server failed on or whose batch it refused as a
    /// whole (``PushOutcome/serverFault(status:message:)``); one it still fails on is set aside (refused, with the
    /// reason), provided the server answers a read of its table, so that one record never holds back the rest.
    /// Returns the traffic of the requests sent again.
    private func settlingServerFaults(
        _ operations: [OutgoingOperation], _ outcomes: inout [PushOutcome], route: Route,
        acceptance: inout Acceptance
    ) async throws -> WireTraffic {
        if outcomes.contains(where: { if case .applied = $0 { true } else { false } }) { acceptance.faultsInARow = 0 }
        let faulted = outcomes.indices.filter { if case .serverFault = outcomes[$0] { true } else { false } }
        guard !faulted.isEmpty else { return WireTraffic() }
        var traffic = WireTraffic()
        if route.batched {
            let again = try await resending(
                faulted.map { operations[$0] }, route: route, refusedAsAWhole: faulted.count == operations.count)
            traffic = again.traffic
            for (index, outcome) in zip(
                faulted,
                try await readingServerCopies(
                    faulted.map { operations[$0] }, again.outcomes,
                    client: route.client))
            {
                outcomes[index] = outcome
            }
        }
        for index in faulted {
            guard case .serverFault(let status, let message) = outcomes[index] else { continue }
            let key = operations[index].operation.key
            // A server that fails reads too is away, not failing on this record: the push stops, nothing is lost.
            let probe = try await route.client.probe(table: key.table)
            guard (200...299).contains(probe.status), acceptance.faultsInARow + 1 < Self.faultsInARowLimit else {
                throw SyncError.unreachable(
                    url: route.client.http.baseURL,
                    reason: "HTTP \(status) for \(key) (\(message)), and the server fails the other operations too")
            }
            acceptance.faultsInARow += 1
            outcomes[index] = .rejected(
                status: status,
                message:
                    "set aside: the server fails on this record every time (HTTP \(status): \(message)); the push went on without it. Send it again with tablesync resolve \(key) --keep-local once the server takes it"
            )
        }
        return traffic
    }

    /// Sends `operations` again after the server failed on them: each alone when it answered them one by one, and
    /// when it refused their batch as a whole (`refusedAsAWhole`), in two halves, each halved again while the server
    /// refuses it whole, so that the record it cannot take ends up alone in a few requests rather than one request
    /// per operation of the batch.
    private func resending(
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
    private func readingServerCopies(
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

    /// Stops the push when a refusal was not about the record but about the request
    /// (``TableClient/requestRefusal(table:)``):
    /// checked once per table, on the first refusal that could be either, unless the server already applied an
    /// operation of that table.
    private func checkRefusal(
        _ outgoing: OutgoingOperation, _ outcome: PushOutcome, client: TableClient,
        acceptance: inout Acceptance
    ) async throws {
        let table = outgoing.operation.table
        switch outcome {
        case .applied:
            acceptance.tables.insert(table)
        case .rejected, .conflict(_, server: nil):
            guard !acceptance.tables.contains(table) else { return }
            if let refusal = try await connection.requestRefusal(client, table: table) { throw refusal }
            acceptance.tables.insert(table)
        case .conflict, .serverCopyNeeded, .authenticationRefused, .serverFault:
            break
        }
    }

    /// Under `client-wins`, a conflict with a live server copy is settled by sending the operation again on the
    /// server's version (an insert becomes an update).
    private func clientWinsRetry(_ outgoing: OutgoingOperation, _ outcome: PushOutcome) -> OutgoingOperation? {
        guard policy == .clientWins, case .conflict(_, let server) = outcome, let server, !server.deleted,
            let serverVersion = server.version
        else { return nil }
        var retried = outgoing
        if retried.operation.kind == .insert { retried.operation.kind = .update }
        retried.baseVersion = serverVersion
        return retried
    }

    /// What an outcome does to the store: the server's copy to write back, a record to remove, a conflict file.
    private func reconcile(
        _ outgoing: OutgoingOperation, _ outcome: PushOutcome, report: inout PushReport,
        pending: inout Pending
    ) async throws {
        let operation = outgoing.operation
        let sent = outgoing.sent
        switch outcome {
        case .applied(let server):
            report.applied += 1
            pending.done.insert(operation.sequence)
            if operation.kind == .delete {
                pending.removals[operation.table, default: []].append(operation.id)
            } else if let server {
                pending.writeBacks[operation.table, default: []].append(server)
                pending.sentFiles[operation.table, default: [:]][operation.id] = outgoing.sentFile
            }
        case .conflict(let status, let server):
            if policy == .serverWins {
                report.settledByPolicy += 1
                pending.done.insert(operation.sequence)
                if let server, !server.deleted {
                    pending.serverCopies[operation.table, default: []].append(server)
                } else {
                    pending.removals[operation.table, default: []].append(operation.id)
                }
                return
            }
            let reason =
                server?.deleted != false
                ? "the record was deleted on the server"
                : "the server's copy changed since version \(operation.baseVersion ?? "(none: the id exists on the server)")"
            try await store.writeConflict(
                ConflictRecord(operation: operation, local: sent, server: server, status: status, reason: reason))
            report.conflicts.append(operation.key)
        case .rejected(let status, let message), .serverFault(let status, let message):
            try await store.writeConflict(
                ConflictRecord(operation: operation, local: sent, server: nil, status: status, reason: message))
            report.rejected.append(operation.key)
        case .serverCopyNeeded(let status):
            // Decided by readingServerCopies before anything is reconciled; kept safe if it ever is not.
            try await store.writeConflict(
                ConflictRecord(
                    operation: operation, local: sent, server: nil, status: status,
                    reason: "the server refused the operation and its copy could not be read"))
            report.conflicts.append(operation.key)
        case .authenticationRefused(let status, let message):
            throw SyncError.authenticationRefused(status: status, message: message)
        }
    }

    /// Makes what was applied durable: record files first, then the journal. A run killed in between sends
    /// those operations again, and the lost-acknowledgement rule counts them as applied.
    private func checkpoint(_ pending: inout Pending) async throws {
        guard !pending.isEmpty else { return }
        let tables = Set(pending.writeBacks.keys).union(pending.removals.keys).union(pending.serverCopies.keys)
        for table in tables.sorted() {
            if let records = pending.writeBacks[table] {
                _ = try await store.applySynced(
                    table: table, encoded: pending.stagedWriteBacks[table] ?? EncodedRecords(records),
                    removals: [], guard: .sentContent(pending.sentFiles[table] ?? [:]))
            }
            let serverCopies = pending.serverCopies[table] ?? []
            let removals = pending.removals[table] ?? []
            if !serverCopies.isEmpty || !removals.isEmpty {
                _ = try await store.applySynced(table: table, records: serverCopies, removals: removals, guard: .none)
            }
        }
        try await store.finishOperations(pending.done)
        pending = Pending()
    }
}
