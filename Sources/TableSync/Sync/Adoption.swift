import SyncProtocol
import TableSyncStorage

/// What a push did with files it had to compare with the server first (``LocalScan/uncompared``: a fresh clone,
/// a restore, a lost `.tablesync/`, a git merge, checkout or revert) and with files in conflict with a pending
/// delete.
package struct AdoptionReport: Sendable, Equatable {
    /// Files that hold the server's copy as it is: indexed as synced, nothing sent.
    package var unchanged = 0
    /// Files the server had moved on from without them saying anything the server's copy does not hold: they now
    /// hold the server's copy (or are removed, when the server deleted the record).
    package var takenFromServer = 0
    /// Files edited on the version the server still has: queued as updates on that version.
    package var edited = 0
    /// Files whose record the server does not have: queued as inserts.
    package var created = 0
    /// Files a git command removed whose record the server still has as this store synced it, after a commit
    /// that descends from the last sync (a merge of a delete, a `git rm` committed): queued as deletes.
    package var deleted = 0
    /// Files a git command removed whose record the server deleted too: nothing to send, the index forgets them.
    package var alreadyDeleted = 0
    /// Files a switch or checkout left behind (`HEAD` does not descend from the last sync) whose record the
    /// server still has: brought back from the server rather than deleted there.
    package var restored = 0
    /// Files that differ from a server copy that moved on, or hold content while a delete is pending, now under
    /// `conflicts/`.
    package var conflicts: [RecordKey] = []
    /// Files that differ from a server copy that moved on, settled by the `server-wins` or `client-wins` policy.
    package var settledByPolicy = 0
    /// Requests made to read the server's copies: one per file for a few, one per page of the table for more.
    package var requests = 0

    /// Files compared with the server.
    package var compared: Int {
        unchanged + takenFromServer + edited + created + deleted + alreadyDeleted + restored + conflicts.count
            + settledByPolicy
    }

    /// An empty report.
    package init() {}
}

/// The rule for one file that must be compared with the server before anything is sent, once the server's copy
/// is known: a pure function, tested alone.
enum AdoptionRule {
    enum Decision: Equatable {
        /// The file is the server's copy: index it as synced.
        case unchanged(ServerRecord)
        /// The server moved on and the file says nothing the server's copy does not: take the server's copy.
        case takeServer(ServerRecord)
        /// The server deleted the record and the file says nothing else: remove the file.
        case removeLocal
        /// An edit on `baseVersion`, the version the file names, which the server still has.
        case edited(baseVersion: String)
        /// The server has no such record and the file is no copy of one: the file is an insert.
        case created
        /// The server has no such record and the file is an intact copy of one (the server lost it): keep the file
        /// as it is (this copy), index it, send nothing.
        case keepAsIs(ServerRecord)
        /// The server moved on from its copy, and the file says something else: a person (or the conflict
        /// policy) decides.
        case conflict(ServerRecord)
    }

    /// Decides for the file holding `local`, whose ``SyncedMark`` is `intact` or not, given the server's copy (`nil`:
    /// no such record). An intact file is the server's copy of its version, so it is never an edit, whatever version
    /// it names. Content is compared without the server-managed properties.
    ///
    /// What the server has already seen of the record counts too: a file the server applied (`alreadyApplied`,
    /// ``AppliedFiles``) that names an older version than the server's, or none, is that old content put back (a
    /// reset, a restore, a switch), never an edit nor a conflict. So is a file whose every change to `base` (the
    /// server's copy of the version it names, from git's history) the server's copy already holds
    /// (``serverHolds(changesOf:from:server:)``), when `.tablesync/` no longer says what was applied. A file without
    /// a `version` for a record this store synced at `syncedVersion` (a hand-made file put back by git after it was
    /// sent) is otherwise an edit on that version.
    static func decide(
        local: [String: JSONValue], intact: Bool, server: ServerRecord?, alreadyApplied: Bool = false,
        syncedVersion: String? = nil, base: [String: JSONValue]? = nil
    ) -> Decision {
        guard let server else {
            // An intact file holds a copy the store wrote from a checked record, so it passes the check again.
            guard intact,
                let copy = try? ServerRecord(
                    validating: .object(SyncedMark.removed(from: local)),
                    requireUpdatedAt: false)
            else { return .created }
            return .keepAsIs(copy)
        }
        let saysNothingElse = intact || ServerRecord.content(local) == server.content
        if server.deleted { return saysNothingElse || alreadyApplied ? .removeLocal : .conflict(server) }
        guard let serverVersion = server.version else {
            return saysNothingElse ? .takeServer(server) : .conflict(server)
        }
        let namedVersion = local[SystemProperty.version]?.stringValue
        if namedVersion == serverVersion {
            return saysNothingElse ? .unchanged(server) : .edited(baseVersion: serverVersion)
        }
        if saysNothingElse || alreadyApplied { return .takeServer(server) }
        if let base, serverHolds(changesOf: ServerRecord.content(local), from: base, server: server.content) {
            return .takeServer(server)
        }
        if namedVersion == nil, syncedVersion == serverVersion { return .edited(baseVersion: serverVersion) }
        return .conflict(server)
    }

    /// Whether `server` holds every change `local` makes to `base`: each property on which the two differ has
    /// `local`'s value on the server, whatever else the server changed since. All three are records' own content.
    static func serverHolds(
        changesOf local: [String: JSONValue], from base: [String: JSONValue], server: [String: JSONValue]
    ) -> Bool {
        Set(local.keys).union(base.keys).allSatisfy { local[$0] == base[$0] || server[$0] == local[$0] }
    }

    /// What to do for a record file a git command removed, synced at `syncedVersion`.
    enum Removal: Equatable {
        /// The server deleted the record too (or never had it): forget it, send nothing.
        case forget
        /// A delete on `baseVersion`.
        case delete(baseVersion: String?)
        /// Bring the server's copy back into the work tree.
        case restore(ServerRecord)
        /// The server changed the record since: a delete held back for a person.
        case conflict
    }

    /// Decides for a file git removed, given the server's copy and where `HEAD` stands against the last sync. A
    /// removal that comes with history the last sync led to (a merge, a committed `git rm`) is a delete; one that
    /// comes from elsewhere (a switch to a branch that lacks the record, a rebase) is not anybody's edit.
    static func decideRemoval(server: ServerRecord?, syncedVersion: String?, position: HeadPosition) -> Removal {
        guard let server, !server.deleted else { return .forget }
        guard position == .atOrAfter || position == .unknown else { return .restore(server) }
        return server.version == syncedVersion ? .delete(baseVersion: syncedVersion) : .conflict
    }
}

/// Compares files with the server's copies before a push sends anything (``LocalScan/uncompared`` and files in
/// conflict with a pending delete), and settles each by ``AdoptionRule``.
///
/// The server's copies come from one read of the table (keyset or `ge` + `$skip` pages of up to 1,000, deleted
/// records included, from the oldest `updatedAt` among the files and stopping once every file is matched), or,
/// for a few files, one read per record. Each page's files are read, decided and written in one durable step;
/// edits, inserts and deletes go to the journal and are pushed by the push that follows; conflicts go under
/// `conflicts/` (or to the policy).
struct Adopter {
    let store: any PushingStore
    let connection: ServerConnection
    let policy: StoreSettings.ConflictPolicy
    let options: SyncOptions
    /// Where `HEAD` stood against the last sync when the files were found.
    var position = HeadPosition.unknown
    /// The record files whose content the server applied for this clone's pushes.
    var appliedFiles = AppliedFiles()

    /// Up to this many files of a table are read one request each; more, and the table is read page by page.
    static let singleReadLimit = 20

    func adopt(_ files: [LocalChange]) async throws -> AdoptionReport {
        var report = AdoptionReport()
        for (table, tableFiles) in Dictionary(grouping: files, by: \.table).sorted(by: { $0.key < $1.key }) {
            let changes = Dictionary(tableFiles.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let client = try await connection.client(table: table)
            var remaining = Set(changes.keys)
            if changes.count <= Self.singleReadLimit {
                var copies: [ServerRecord] = []
                for id in changes.keys.sorted() {
                    report.requests += 1
                    if let copy = try await client.serverCopy(table: table, id: id) { copies.append(copy) }
                }
                try await settle(
                    table: table, serverCopies: copies, changes: changes, remaining: &remaining, report: &report)
            } else {
                try await walk(table: table, client: client, from: oldestUpdatedAt(of: Array(changes.values))) { page in
                    report.requests += 1
                    try await settle(
                        table: table, serverCopies: page, changes: changes, remaining: &remaining, report: &report)
                    return !remaining.isEmpty
                }
            }
            // What the server never sent, it does not have.
            try await settleAbsent(
                table: table, changes: remaining.sorted().compactMap { changes[$0] }, report: &report)
        }
        return report
    }

    /// The oldest `updatedAt` of the files that are there, where the table's read can start: a record whose copy a
    /// file holds has that `updatedAt` on the server, or a later one. `nil` (from the start) when a file is gone or
    /// names none.
    private func oldestUpdatedAt(of changes: [LocalChange]) -> String? {
        var oldest: (text: String, instant: Timestamp)?
        for change in changes {
            guard change.kind != .removedByGit, change.kind != .missing,
                let file = try? store.recordFiles.load(table: change.table, id: change.id),
                let text = file.record[SystemProperty.updatedAt]?.stringValue, let instant = Timestamp(parsing: text)
            else { return nil }
            if let current = oldest, current.instant <= instant { continue }
            oldest = (text, instant)
        }
        return oldest?.text
    }

    /// Reads every record of `table` changed at or after `start` (all, without it), deleted ones included, in
    /// pages, handing each page's records to `body` until it returns `false` or the table ends.
    private func walk(
        table: String, client: TableClient, from start: String?,
        _ body: ([ServerRecord]) async throws -> Bool
    ) async throws {
        let mode = try await Puller.pagingMode(options: options, connection: connection, client: client)
        let tableURL = client.http.baseURL + TablePath.table(table)
        // An empty last id keeps the records stamped at `start` itself in a keyset read (ids are never empty).
        var watermark = start.map { PullWatermark(updatedAt: $0, lastID: "") }
        var skip = 0
        var pageSize = options.pageSize ?? Puller.defaultPageSize
        var repeatCheck = PullPlan.RepeatedPageCheck()
        while true {
            let page: ServerPage
            (page, pageSize) = try await Puller.fetchPage(
                client: client, connection: connection, table: table, pageSize: pageSize
            ) { size in
                PullPlan.query(
                    mode: mode, baseFilter: nil, watermark: watermark, skip: skip, pageSize: size,
                    dateTimes: PullPlan.dateTimeForm(apiVersion: client.apiVersion))
            }
            if page.itemCount == 0 { return }
            guard !page.cursorItems.isEmpty else {
                throw SyncError.malformedResponse(
                    url: tableURL,
                    reason:
                        """
                        none of the page's \(page.itemCount) records has an id and an updatedAt, so the comparison \
                        cannot move past them
                        """
                )
            }
            try repeatCheck.check(mode: mode, skip: skip, page: page.cursorItems, url: tableURL)
            let next = PullPlan.advance(mode: mode, watermark: watermark, skip: skip, page: page.cursorItems)
            if mode == .keyset, !PullPlan.advances(from: watermark, to: next.0) {
                throw SyncError.malformedResponse(
                    url: tableURL,
                    reason:
                        "a page does not move past the previous one, so the comparison stopped instead of asking again")
            }
            (watermark, skip) = next
            guard try await body(page.records) else { return }
            if PullPlan.isLastPage(
                apiVersion: client.apiVersion, itemCount: page.itemCount, pageSize: pageSize, nextLink: page.nextLink)
            {
                return
            }
        }
    }

    /// What one comparison settles: files to write or remove as the server has them, index entries to forget,
    /// operations to queue, and conflicts to file once those are queued.
    private struct Settlement {
        var writes: [ServerRecord] = []
        var removals: [String] = []
        var sent: [String: SentFile] = [:]
        var changes: [LocalChange] = []
        var conflicts: [(id: String, local: [String: JSONValue]?, server: ServerRecord?, reason: String)] = []
    }

    /// Settles the files of `table` whose ids are in `remaining` and that `serverCopies` has copies of.
    private func settle(
        table: String, serverCopies: [ServerRecord], changes: [String: LocalChange],
        remaining: inout Set<String>, report: inout AdoptionReport
    ) async throws {
        let matched = serverCopies.filter { remaining.contains($0.id) }.map { (id: $0.id, server: $0) }
        guard !matched.isEmpty else { return }
        // The server has these records: none of them may end up queued as an insert, read or not.
        for (id, _) in matched { remaining.remove(id) }
        var settlement = Settlement()
        let files = store.recordFiles
        // Each file that is there is read once, in parallel; one gone or broken since the scan is left to the next
        // scan.
        let read = concurrentMap(matched) { match -> (loaded: RecordFile.Loaded, sent: SentFile)? in
            guard let kind = changes[match.id]?.kind, kind != .removedByGit, kind != .missing else { return nil }
            return try? files.toSend(table: table, id: match.id, scanned: nil)
        }
        for ((id, server), file) in zip(matched, read) {
            guard let change = changes[id] else { continue }
            switch change.kind {
            case .removedByGit, .missing:
                settleRemoval(change, server: server, into: &settlement, report: &report)
            case .deleteConflict:
                guard let file else { continue }
                settlement.conflicts.append(
                    (
                        id, ServerRecord.content(file.loaded.record), server,
                        """
                        a delete of this record is pending (queued here earlier, or merged from another clone), but \
                        its file holds content; keep the file's content, take the server's copy, or discard the record
                        """
                    ))
            default:
                guard let file else { continue }
                settlement.sent[id] = file.sent
                try await settleFile(
                    change, local: file.loaded, hash: file.sent.hash, server: server, into: &settlement, report: &report
                )
            }
        }
        try await apply(settlement, table: table, report: &report)
    }

    /// Settles files whose record the server does not have (deleted ones included in its reads, so: never had, or
    /// removed for good).
    private func settleAbsent(table: String, changes: [LocalChange], report: inout AdoptionReport) async throws {
        guard !changes.isEmpty else { return }
        var settlement = Settlement()
        for change in changes {
            switch change.kind {
            case .removedByGit, .missing:
                settleRemoval(change, server: nil, into: &settlement, report: &report)
            case .deleteConflict:
                guard let file = try? store.recordFiles.load(table: table, id: change.id) else { continue }
                settlement.conflicts.append(
                    (
                        change.id, ServerRecord.content(file.record), nil,
                        """
                        a delete of this record is pending (queued here earlier, or merged from another clone), but \
                        its file holds content; the server no longer has the record
                        """
                    ))
            default:
                guard let file = try? store.recordFiles.toSend(table: table, id: change.id, scanned: nil) else {
                    continue
                }
                settlement.sent[change.id] = file.sent
                try await settleFile(
                    change, local: file.loaded, hash: file.sent.hash, server: nil, into: &settlement, report: &report)
            }
        }
        try await apply(settlement, table: table, report: &report)
    }

    private func settleFile(
        _ change: LocalChange, local: RecordFile.Loaded, hash: String, server: ServerRecord?,
        into settlement: inout Settlement, report: inout AdoptionReport
    ) async throws {
        let id = change.id
        let intact = SyncedMark.isIntact(
            local.record, bytes: local.bytes, bytesAreCanonical: local.bytesAreCanonical)
        let alreadyApplied = appliedFiles.contains(hash: hash, for: change.key)
        var decision = AdoptionRule.decide(
            local: local.record, intact: intact, server: server, alreadyApplied: alreadyApplied,
            syncedVersion: change.baseVersion)
        // Before calling it a conflict, ask git's history what the server held at the file's version.
        if case .conflict(let server) = decision, !server.deleted,
            let version = local.record[SystemProperty.version]?.stringValue,
            let base = try await store.syncedCopy(change.key, version: version)
        {
            decision = AdoptionRule.decide(
                local: local.record, intact: intact, server: server, alreadyApplied: alreadyApplied,
                syncedVersion: change.baseVersion, base: base)
        }
        switch decision {
        case .unchanged(let server):
            settlement.writes.append(server)
            report.unchanged += 1
        case .keepAsIs(let copy):
            settlement.writes.append(copy)
            report.unchanged += 1
        case .takeServer(let server):
            settlement.writes.append(server)
            report.takenFromServer += 1
        case .removeLocal:
            settlement.removals.append(id)
            report.takenFromServer += 1
        case .edited(let baseVersion):
            settlement.changes.append(
                LocalChange(
                    kind: .modified, table: change.table, id: id, fileName: change.fileName, baseVersion: baseVersion))
            report.edited += 1
        case .created:
            settlement.changes.append(
                LocalChange(kind: .created, table: change.table, id: id, fileName: change.fileName))
            report.created += 1
        case .conflict(let server):
            settleConflict(change, local: local, server: server, into: &settlement, report: &report)
        }
    }

    /// A file changed on an older version than the server's copy: settled by the conflict policy, or kept as a
    /// conflict beside the edit.
    private func settleConflict(
        _ change: LocalChange, local: RecordFile.Loaded, server: ServerRecord,
        into settlement: inout Settlement, report: inout AdoptionReport
    ) {
        let id = change.id
        if policy == .serverWins {
            ConflictPolicyLog.droppedLocal(
                change.key, content: ServerRecord.content(local.record), logger: options.logger)
        }
        switch (policy, server.deleted) {
        case (.serverWins, true):
            settlement.removals.append(id)
            report.settledByPolicy += 1
        case (.serverWins, false):
            settlement.writes.append(server)
            report.settledByPolicy += 1
        case (.clientWins, false):
            settlement.changes.append(
                LocalChange(
                    kind: .modified, table: change.table, id: id, fileName: change.fileName,
                    baseVersion: server.version))
            report.settledByPolicy += 1
        case (.manual, _), (.clientWins, true):
            let localVersion = local.record[SystemProperty.version]?.stringValue
            let versions = "version \(localVersion ?? "?") → \(server.version ?? "?")"
            settlement.changes.append(
                LocalChange(
                    kind: .modified, table: change.table, id: id, fileName: change.fileName,
                    baseVersion: local.record[SystemProperty.version]?.stringValue))
            settlement.conflicts.append(
                (
                    id, ServerRecord.content(local.record), server,
                    server.deleted
                        ? """
                        compared with the server before sending: the server deleted the record (\(versions)) \
                        and the file differs from its last copy
                        """
                        : """
                        compared with the server before sending: the server's copy moved on (\(versions)) and \
                        the file was changed on the older version
                        """
                ))
        }
    }

    private func settleRemoval(
        _ change: LocalChange, server: ServerRecord?, into settlement: inout Settlement,
        report: inout AdoptionReport
    ) {
        // A file only `HEAD` knew is deleted like one removed after the last sync: whoever removed it, this clone did.
        let position = change.kind == .missing ? HeadPosition.atOrAfter : self.position
        switch AdoptionRule.decideRemoval(server: server, syncedVersion: change.baseVersion, position: position) {
        case .forget:
            settlement.removals.append(change.id)
            report.alreadyDeleted += 1
        case .delete(let baseVersion):
            settlement.changes.append(
                LocalChange(
                    kind: .deleted, table: change.table, id: change.id, fileName: change.fileName,
                    baseVersion: baseVersion))
            report.deleted += 1
        case .restore(let server):
            settlement.writes.append(server)
            report.restored += 1
        case .conflict:
            settlement.changes.append(
                LocalChange(
                    kind: .deleted, table: change.table, id: change.id, fileName: change.fileName,
                    baseVersion: change.baseVersion))
            settlement.conflicts.append(
                (
                    change.id, nil, server,
                    """
                    a git command removed the file, but the server changed the record since this store synced it \
                    (version \(change.baseVersion ?? "?") → \(server?.version ?? "?"))
                    """
                ))
        }
    }

    /// Writes, removes and queues what `settlement` says, then files its conflicts against their queued operations.
    private func apply(_ settlement: Settlement, table: String, report: inout AdoptionReport) async throws {
        // Files that changed since they were read keep their bytes; only the index learns the server's version.
        if !settlement.writes.isEmpty || !settlement.removals.isEmpty {
            _ = try await store.applySynced(
                table: table, records: settlement.writes, removals: settlement.removals,
                guard: .sentContent(settlement.sent))
        }
        if !settlement.changes.isEmpty { _ = try await store.queue(settlement.changes) }
        for conflict in settlement.conflicts {
            let key = RecordKey(table: table, id: conflict.id)
            guard let operation = await store.pendingOperation(key) else { continue }
            report.conflicts.append(key)
            try await store.writeConflict(
                ConflictRecord(
                    operation: operation, local: conflict.local, server: conflict.server,
                    status: nil, reason: conflict.reason))
        }
    }
}
