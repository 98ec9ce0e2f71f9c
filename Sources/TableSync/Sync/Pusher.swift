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
    /// Files skipped because they are broken.
    public var problems: [RecordFileProblem] = []
    /// Operations sent (requests made for operations).
    public var requests = 0

    public init() {}
}

/// Sends pending operations in journal order and reconciles each answer: write-back, conflicts, policies.
struct Pusher {
    let context: SyncContext
    let client: TableClient
    let policy: StoreSettings.ConflictPolicy
    var progress: (@Sendable (SyncProgress) -> Void)?
    /// Operations between two durable checkpoints (write-backs, then journal).
    var checkpointInterval = 200

    private struct Pending {
        var writeBacks: [String: [[String: JSONValue]]] = [:]
        var sentHashes: [String: [String: String]] = [:]
        var serverCopies: [String: [[String: JSONValue]]] = [:]
        var removals: [String: [String]] = [:]
        var done: Set<Int64> = []
        var isEmpty: Bool { done.isEmpty }
    }

    func push(tables: Set<String>?) async throws -> PushReport {
        var report = PushReport()
        let scan = try await context.recordHandEdits()
        report.problems = scan.problems
        let waiting = Set(try await context.conflictKeys())
        var pending = Pending()
        let operations = await context.pendingOperations.filter { tables?.contains($0.table) ?? true }
        do {
            for operation in operations {
                if waiting.contains(operation.key) {
                    report.waiting.append(operation.key)
                    continue
                }
                try await pushOne(operation, report: &report, pending: &pending)
                if pending.done.count >= checkpointInterval {
                    try await checkpoint(&pending)
                    progress?(.pushed(applied: report.applied + report.settledByPolicy, total: operations.count))
                }
            }
        } catch {
            try await checkpoint(&pending)
            throw error
        }
        try await checkpoint(&pending)
        return report
    }

    private func pushOne(_ operation: PendingOperation, report: inout PushReport, pending: inout Pending) async throws {
        var sent: [String: JSONValue]?
        var sentHash: String?
        if operation.kind != .delete {
            let loaded: RecordFile.Loaded?
            do {
                loaded = try await context.loadRecordFile(table: operation.table, id: operation.id)
            } catch let error as StoreError {
                if case .brokenRecordFile(let problem) = error { report.problems.append(problem) }
                return
            }
            // The file vanished after the scan: the next push queues its delete.
            guard let loaded else { return }
            sent = ServerRecord.content(loaded.record)
            sentHash = SHA256.hexDigest(of: loaded.bytes)
        }
        var outcome = try await send(operation, sent: sent, baseVersion: operation.baseVersion, report: &report)
        if case .conflict(_, let server) = outcome, policy == .clientWins, let server, !ServerRecord.isDeleted(server),
           let serverVersion = server[SystemProperty.version]?.stringValue {
            var retried = operation
            if retried.kind == .insert { retried.kind = .update }
            outcome = try await send(retried, sent: sent, baseVersion: serverVersion, report: &report)
            if case .applied = outcome { report.settledByPolicy += 1 }
        }
        switch outcome {
        case .applied(let server):
            report.applied += 1
            pending.done.insert(operation.sequence)
            if operation.kind == .delete {
                pending.removals[operation.table, default: []].append(operation.id)
            } else if let server {
                pending.writeBacks[operation.table, default: []].append(server)
                pending.sentHashes[operation.table, default: [:]][operation.id] = sentHash
            }
        case .conflict(let status, let server):
            if policy == .serverWins {
                report.settledByPolicy += 1
                pending.done.insert(operation.sequence)
                if let server, !ServerRecord.isDeleted(server) {
                    pending.serverCopies[operation.table, default: []].append(server)
                } else {
                    pending.removals[operation.table, default: []].append(operation.id)
                }
                return
            }
            let reason = server == nil || ServerRecord.isDeleted(server!)
                ? "the record was deleted on the server"
                : "the server's copy changed since version \(operation.baseVersion ?? "(none: the id exists on the server)")"
            try await context.writeConflict(ConflictRecord(operation: operation, local: sent, server: server, status: status, reason: reason))
            report.conflicts.append(operation.key)
        case .rejected(let status, let message):
            try await context.writeConflict(ConflictRecord(operation: operation, local: sent, server: nil, status: status, reason: message))
            report.rejected.append(operation.key)
        case .authenticationRefused(let status, let message):
            throw SyncError.authenticationRefused(status: status, message: message)
        }
    }

    private func send(_ operation: PendingOperation, sent: [String: JSONValue]?, baseVersion: String?,
                      report: inout PushReport) async throws -> PushOutcome {
        report.requests += 1
        let response: HTTPResponse
        switch operation.kind {
        case .insert:
            response = try await client.insert(table: operation.table, record: sent ?? [:])
        case .update:
            response = try await client.update(table: operation.table, id: operation.id, record: sent ?? [:], baseVersion: baseVersion)
        case .delete:
            response = try await client.delete(table: operation.table, id: operation.id, baseVersion: baseVersion)
        }
        return PushOutcome.classify(kind: operation.kind, sent: sent, response: response)
    }

    /// Makes what was applied durable: record files first, then the journal. A run killed in between sends
    /// those operations again, and the lost-acknowledgement rule counts them as applied.
    private func checkpoint(_ pending: inout Pending) async throws {
        guard !pending.isEmpty else { return }
        let tables = Set(pending.writeBacks.keys).union(pending.removals.keys).union(pending.serverCopies.keys)
        for table in tables.sorted() {
            if let records = pending.writeBacks[table] {
                _ = try await context.applySynced(table: table, records: records, guard: .sentContent(pending.sentHashes[table] ?? [:]))
            }
            _ = try await context.applySynced(table: table, records: pending.serverCopies[table] ?? [],
                                              removals: pending.removals[table] ?? [], guard: .none)
        }
        try await context.finishOperations(pending.done)
        pending = Pending()
    }
}

extension SyncContext {
    /// Removes settled operations from the journal and saves it.
    func finishOperations(_ sequences: Set<Int64>) throws {
        journal.remove(sequences: sequences)
        try saveJournal()
    }

    /// Pushes pending operations (after queuing hand edits) in journal order; `tables` limits it to some tables.
    /// Throws ``SyncError`` when the server is unreachable or refuses the credentials; the journal keeps
    /// everything not yet applied.
    @discardableResult
    public func push(tables: Set<String>? = nil, options: SyncOptions = SyncOptions()) async throws -> PushReport {
        try requireWritable()
        let client = try TableClient.make(settings: settings, environment: options.environment, timeout: options.timeout,
                                          retryPolicy: options.retryPolicy)
        return try await Pusher(context: self, client: client, policy: options.conflictPolicy ?? settings.conflictPolicy,
                                progress: options.progress).push(tables: tables)
    }
}
