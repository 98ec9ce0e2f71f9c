import Logging
import SyncProtocol
import TableSyncStorage

/// One push's sending, from its first request to the journal's rewrite (``Pusher``). It owns what the sending
/// changes as it goes: the report, the operations reconciled since the last checkpoint, what the push learned of
/// its tables, the batch on the wire and the checkpoints under way. Its methods are the push's steps: prepare
/// operations, send them, take their answer and reconcile it, checkpoint.
///
/// A run ends once: ``finish()`` takes the last answer and makes everything durable; after a failure,
/// ``abandon()`` waits for the work under way and makes durable what was reconciled before it.
struct PushRun: ~Copyable {
    private let pusher: Pusher
    private let route: Pusher.Route
    /// What the push did so far.
    private var report: PushReport
    /// The operations reconciled since the last checkpoint began.
    private var reconciled = Reconciled()
    private var acceptance = Acceptance()
    /// The batch on the wire (batched only), whose answer is taken once the next batch is on the wire too.
    private var inFlight: SentBatch?
    /// The batches' checkpoints, each made once the one before it has ended (batched only).
    private var checkpoints = CommitSequence<Void>()
    /// Operations answered so far, for progress: each counts once, however it ended (a client-wins retry too).
    private var settled = 0
    /// Operations the push sends, for progress.
    private let total: Int

    /// What the server answered for operations sent together: the outcome of each, and the traffic.
    typealias SenderAnswer = (outcomes: [PushOutcome], traffic: WireTraffic)

    /// Operations sent in one request (a batch, or a batch of one), and the task that awaits their answer.
    private struct SentBatch {
        let operations: [OutgoingOperation]
        let answer: Task<SenderAnswer, any Error>
    }

    /// The operations reconciled since the last checkpoint: what the checkpoint writes into the record files
    /// (write-backs, the server's copies, removals) and the operations it takes out of the journal.
    private struct Reconciled {
        /// The server's copies of applied inserts and updates, by table.
        var writeBacks: [String: [ServerRecord]] = [:]
        /// The write-backs encoded and written into spare files ahead of the checkpoint, by table.
        var stagedWriteBacks: [String: EncodedRecords] = [:]
        /// The files as sent, by table and id: a write-back never overwrites a newer edit.
        var sentFiles: [String: [String: SentFile]] = [:]
        /// The server's copies that settle conflicts under `server-wins`, by table.
        var serverCopies: [String: [ServerRecord]] = [:]
        /// The ids of records to remove, by table.
        var removals: [String: [String]] = [:]
        /// The sequence numbers of the operations settled.
        var done: Set<Int64> = []
        /// The hashes of the files whose content the server applied, by record (``AppliedFiles``).
        var appliedFiles: [RecordKey: String] = [:]
        /// Whether no operation was settled since the last checkpoint: there is nothing to make durable.
        var isEmpty: Bool { done.isEmpty }

        /// Encodes the write-backs and writes them into spare files, ahead of the checkpoint. A failed write
        /// fails the push as it would have failed the checkpoint; what was staged goes back when this is dropped.
        mutating func stageWriteBacks(in spares: SpareFiles) throws {
            for (table, records) in writeBacks {
                var encoded = EncodedRecords(records)
                try encoded.stage(in: spares)
                stagedWriteBacks[table] = encoded
            }
        }

        /// The checkpoint: makes what was applied durable in `store`, record files first, then the journal. A run
        /// killed in between sends those operations again, and the lost-acknowledgement rule counts them as
        /// applied.
        func makeDurable(in store: any PushingStore) async throws {
            guard !isEmpty else { return }
            let tables = Set(writeBacks.keys).union(removals.keys).union(serverCopies.keys)
            for table in tables.sorted() {
                if let records = writeBacks[table] {
                    _ = try await store.applySynced(
                        table: table, encoded: stagedWriteBacks[table] ?? EncodedRecords(records),
                        removals: [], guard: .sentContent(sentFiles[table] ?? [:]))
                }
                let serverCopies = serverCopies[table] ?? []
                let removals = removals[table] ?? []
                if !serverCopies.isEmpty || !removals.isEmpty {
                    _ = try await store.applySynced(
                        table: table, records: serverCopies, removals: removals, guard: .none)
                }
            }
            try await store.finishOperations(done, appliedFiles: appliedFiles)
        }
    }

    /// What the push learned of its tables: those where the server applied an operation or answered a read, so
    /// a refusal there concerns a record, not the request (``TableClient/requestRefusal(table:)``).
    private struct Acceptance {
        var tables: Set<String> = []
        /// Operations set aside in a row because the server failed on them (``settlingServerFaults(_:_:)``).
        var faultsInARow = 0
    }

    /// A run of `pusher` on `route`, sending `total` operations, whose report so far is `report`.
    init(pusher: Pusher, route: Pusher.Route, report: PushReport, total: Int) {
        self.pusher = pusher
        self.route = route
        self.report = report
        self.total = total
    }

    /// The operations of `window` as they go out: each with its record file's content (from `reads` when the scan
    /// kept it) and, batched, encoded as a batch member; one larger than the server takes is set aside, and one
    /// with nothing left to send (``prepare(_:scanned:)``) is left out.
    mutating func prepare(
        _ window: ArraySlice<PendingOperation>, reads: inout ReadRecordFiles
    ) async throws -> [OutgoingOperation] {
        var prepared: [OutgoingOperation] = []
        for operation in window {
            guard var outgoing = try prepare(operation, scanned: reads.take(operation.key)) else { continue }
            if route.batched {
                outgoing.encodeBatchMember(apiVersion: route.client.apiVersion)
                if let limit = route.serverLimit, let size = outgoing.batchMember?.count, size > limit {
                    try await setAsideTooLarge(outgoing, size: size, limit: limit)
                    continue
                }
            }
            prepared.append(outgoing)
        }
        return prepared
    }

    /// Sends `operations` in one request. One request per operation: the answer is taken and reconciled at once,
    /// and a checkpoint made every `checkpointInterval` operations. Batched: the batch stays on the wire while the
    /// previous batch's answer is reconciled (``finishBatch(_:)``).
    mutating func send(_ operations: [OutgoingOperation]) async throws {
        let sender = route.sender
        let batch = SentBatch(operations: operations, answer: Task { try await sender.send(operations) })
        guard route.batched else {
            try await exchange(batch)
            settled += operations.count
            if reconciled.done.count >= pusher.checkpointInterval {
                try await checkpoint()
                pusher.options.progress?(.pushed(settled: settled, total: total))
            }
            return
        }
        let previous = inFlight
        inFlight = batch
        if let previous { try await finishBatch(previous) }
    }

    /// Ends the push: the last batch's answer taken and reconciled, every checkpoint made, then the journal
    /// rewritten. A failure before the last checkpoint ends the run as ``abandon()`` does.
    consuming func finish() async throws -> PushReport {
        do {
            if let last = inFlight {
                inFlight = nil
                try await finishBatch(last)
            }
            try await checkpoints.finish()
        } catch {
            try await abandon()
            throw error
        }
        try await checkpoint()
        try await pusher.store.saveJournal()
        return report
    }

    /// Ends a push that failed, before the caller throws its error: nothing goes on behind the caller, and what was
    /// reconciled is made durable. Throws only when that checkpoint fails.
    consuming func abandon() async throws {
        // A batch still in flight is abandoned: if the server applies it anyway, its operations are still in
        // the journal, and the next push's lost-acknowledgement rule counts them as applied.
        inFlight?.answer.cancel()
        _ = await inFlight?.answer.result
        // A checkpoint under way ends first (its failure may be the error at hand); what was reconciled since
        // is made durable after it.
        await checkpoints.settle()
        try await checkpoint()
        // The push's own error is the one to report; a journal left unrewritten is rewritten on the next open.
        try? await pusher.store.saveJournal()
    }

    /// Reconciles a batch's answer and hands it to a task that stages its write-back
    /// (``Reconciled/stageWriteBacks(in:)``) beside the previous batch's checkpoint, then makes its own once that
    /// one has ended: checkpoints stay in batch order. Returns when the previous checkpoint has ended; the caller
    /// prepares the next batch while this one's is made.
    private mutating func finishBatch(_ batch: SentBatch) async throws {
        try await exchange(batch)
        let staged = reconciled
        reconciled = Reconciled()
        let store = pusher.store
        let spares = store.spareFiles
        _ = try await checkpoints.append(
            stage: {
                var staged = staged
                try staged.stageWriteBacks(in: spares)
                return staged
            },
            commit: { staged, _ in try await staged.makeDurable(in: store) })
        settled += batch.operations.count
        pusher.options.progress?(.pushed(settled: settled, total: total))
    }

    /// Makes the operations reconciled so far durable (``Reconciled/makeDurable(in:)``).
    private mutating func checkpoint() async throws {
        try await reconciled.makeDurable(in: pusher.store)
        reconciled = Reconciled()
    }

    /// The operation with the content it sends: its record file as it is now. `nil` when there is nothing to
    /// send (the file is broken, reported, or vanished after the scan: the next push queues its delete).
    private mutating func prepare(
        _ operation: PendingOperation, scanned: ReadRecordFile?
    ) throws -> OutgoingOperation? {
        guard operation.kind != .delete else {
            return OutgoingOperation(operation: operation, sent: nil, sentFile: nil, baseVersion: operation.baseVersion)
        }
        let file: (loaded: RecordFile.Loaded, sent: SentFile)?
        do {
            file = try pusher.store.recordFiles.toSend(table: operation.table, id: operation.id, scanned: scanned)
        } catch let error as StoreError {
            if case .brokenRecordFile(let problem) = error { report.problems.append(problem) }
            return nil
        }
        guard let file else { return nil }
        return OutgoingOperation(
            operation: operation, sent: ServerRecord.content(file.loaded.record),
            sentFile: file.sent, baseVersion: operation.baseVersion)
    }

    /// Takes the answer to `batch` (sent already), reads the records whose refusal came without the server's
    /// copy, sends again on the server's version those that `client-wins` settles, and reconciles every outcome
    /// in order.
    private mutating func exchange(_ batch: SentBatch) async throws {
        let operations = batch.operations
        let answered = try await batch.answer.value
        var outcomes = try await pusher.readingServerCopies(operations, answered.outcomes, client: route.client)
        report.traffic += answered.traffic
        report.traffic += try await settlingServerFaults(operations, &outcomes)
        let conflicted = Pusher.liveConflicts(operations, outcomes)
        let committed = conflicted.isEmpty ? [:] : try await pusher.store.committedContents(conflicted)
        let retries = operations.indices.compactMap { index -> (index: Int, OutgoingOperation, byPolicy: Bool)? in
            if let retried = pusher.clientWinsRetry(operations[index], outcomes[index]) {
                return (index, retried, true)
            }
            return pusher.ownCommitRetry(operations[index], outcomes[index], committed: committed).map {
                (index, $0, false)
            }
        }
        if !retries.isEmpty {
            let (sentAgain, retryTraffic) = try await route.sender.send(retries.map(\.1))
            let again = try await pusher.readingServerCopies(retries.map(\.1), sentAgain, client: route.client)
            report.traffic += retryTraffic
            for (retry, outcome) in zip(retries, again) {
                outcomes[retry.index] = outcome
                if case .applied = outcome, retry.byPolicy { report.settledByPolicy += 1 }
            }
        }
        pusher.options.logger.debug(
            "pushed",
            metadata: [
                "operations": .stringConvertible(operations.count),
                "batched": .stringConvertible(route.batched),
                "outcomes": .string(PushOutcome.tally(outcomes))
            ])
        // A damaged answer stops the push once the other answers are reconciled: its operation stays pending.
        var damaged: SyncError?
        for (outgoing, outcome) in zip(operations, outcomes) {
            if case .damagedAnswer = outcome {
                damaged = damaged ?? damagedAnswerError(outgoing.operation, outcome)
                continue
            }
            try await checkRefusal(outgoing, outcome)
            try await reconcile(outgoing, outcome)
        }
        if let damaged { throw damaged }
    }

    /// The error a push stops with when the server's 2xx answer to `operation` is not a protocol answer.
    private func damagedAnswerError(_ operation: PendingOperation, _ outcome: PushOutcome) -> SyncError? {
        guard case .damagedAnswer(let status, let reason) = outcome else { return nil }
        return SyncError.malformedResponse(
            url: route.client.http.baseURL + TablePath.table(operation.table),
            reason: "HTTP \(status) to the \(operation.kind.rawValue) of \(operation.key): \(reason)")
    }

    /// Files a record larger than the server takes (the limit its `/health` announces) as refused, without sending
    /// it: sent, its batch would be refused as a whole.
    private mutating func setAsideTooLarge(_ outgoing: OutgoingOperation, size: Int, limit: Int) async throws {
        let key = outgoing.operation.key
        try await pusher.store.writeConflict(
            ConflictRecord(
                operation: outgoing.operation, local: outgoing.sent, server: nil, status: nil,
                reason:
                    """
                    set aside: the record is \(size) bytes, more than the \(limit) the server takes in a request (its \
                    /health); make it smaller, then send it again with tablesync resolve \(key) --keep-local
                    """
            ))
        report.rejected.append(key)
    }

    /// Sends again alone, with the retries, each operation the server failed on or whose batch it refused as a
    /// whole (``PushOutcome/serverFault(status:message:)``); one it still fails on is set aside (refused, with the
    /// reason), provided the server answers a read of its table, so that one record never holds back the rest.
    /// Returns the traffic of the requests sent again.
    private mutating func settlingServerFaults(
        _ operations: [OutgoingOperation], _ outcomes: inout [PushOutcome]
    ) async throws -> WireTraffic {
        if outcomes.contains(where: { if case .applied = $0 { true } else { false } }) { acceptance.faultsInARow = 0 }
        let faulted = outcomes.indices.filter { if case .serverFault = outcomes[$0] { true } else { false } }
        guard !faulted.isEmpty else { return WireTraffic() }
        var traffic = WireTraffic()
        if route.batched {
            let again = try await pusher.resending(
                faulted.map { operations[$0] }, route: route, refusedAsAWhole: faulted.count == operations.count)
            traffic = again.traffic
            for (index, outcome) in zip(
                faulted,
                try await pusher.readingServerCopies(
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
            guard (200...299).contains(probe.status), acceptance.faultsInARow + 1 < Pusher.faultsInARowLimit else {
                throw SyncError.unreachable(
                    url: route.client.http.baseURL,
                    reason: "HTTP \(status) for \(key) (\(message)), and the server fails the other operations too")
            }
            acceptance.faultsInARow += 1
            outcomes[index] = .rejected(
                status: status,
                message:
                    """
                    set aside: the server fails on this record every time (HTTP \(status): \(message)); the push went \
                    on without it. Send it again with tablesync resolve \(key) --keep-local once the server takes it
                    """
            )
        }
        return traffic
    }

    /// Stops the push when a refusal was not about the record but about the request
    /// (``TableClient/requestRefusal(table:)``):
    /// checked once per table, on the first refusal that could be either, unless the server already applied an
    /// operation of that table.
    private mutating func checkRefusal(_ outgoing: OutgoingOperation, _ outcome: PushOutcome) async throws {
        let table = outgoing.operation.table
        switch outcome {
        case .applied:
            acceptance.tables.insert(table)
        case .rejected, .conflict(_, server: nil):
            guard !acceptance.tables.contains(table) else { return }
            if let refusal = try await pusher.connection.requestRefusal(route.client, table: table) { throw refusal }
            acceptance.tables.insert(table)
        case .conflict, .serverCopyNeeded, .authenticationRefused, .serverFault, .damagedAnswer:
            break
        }
    }

    /// What an outcome does to the store: the server's copy to write back, a record to remove, a conflict file.
    private mutating func reconcile(_ outgoing: OutgoingOperation, _ outcome: PushOutcome) async throws {
        let operation = outgoing.operation
        let sent = outgoing.sent
        switch outcome {
        case .applied(let server):
            report.applied += 1
            reconciled.done.insert(operation.sequence)
            if operation.kind == .delete {
                reconciled.removals[operation.table, default: []].append(operation.id)
            } else if let server {
                reconciled.writeBacks[operation.table, default: []].append(server)
                reconciled.sentFiles[operation.table, default: [:]][operation.id] = outgoing.sentFile
            }
            if let hash = outgoing.sentFile?.hash { reconciled.appliedFiles[operation.key] = hash }
        case .conflict(let status, let server):
            if pusher.policy == .serverWins {
                report.settledByPolicy += 1
                ConflictPolicyLog.droppedLocal(operation.key, content: sent, logger: pusher.options.logger)
                reconciled.done.insert(operation.sequence)
                if let server, !server.deleted {
                    reconciled.serverCopies[operation.table, default: []].append(server)
                } else {
                    reconciled.removals[operation.table, default: []].append(operation.id)
                }
                return
            }
            let reason =
                server?.deleted != false
                ? "the record was deleted on the server"
                : """
                the server's copy changed since version \
                \(operation.baseVersion ?? "(none: the id exists on the server)")
                """
            try await pusher.store.writeConflict(
                ConflictRecord(operation: operation, local: sent, server: server, status: status, reason: reason))
            report.conflicts.append(operation.key)
        case .rejected(let status, let message), .serverFault(let status, let message):
            try await pusher.store.writeConflict(
                ConflictRecord(operation: operation, local: sent, server: nil, status: status, reason: message))
            report.rejected.append(operation.key)
        case .serverCopyNeeded(let status):
            // Decided by readingServerCopies before anything is reconciled; kept safe if it ever is not.
            try await pusher.store.writeConflict(
                ConflictRecord(
                    operation: operation, local: sent, server: nil, status: status,
                    reason: "the server refused the operation and its copy could not be read"))
            report.conflicts.append(operation.key)
        case .authenticationRefused(let status, let message):
            throw SyncError.authenticationRefused(status: status, message: message)
        case .damagedAnswer:
            // Kept pending by exchange(_:); reconciled as the push's failure if it ever is not.
            if let error = damagedAnswerError(operation, outcome) { throw error }
        }
    }
}
