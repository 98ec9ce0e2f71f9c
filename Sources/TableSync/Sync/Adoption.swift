import SyncProtocol

/// What a push did with files it had to compare with the server first (``LocalChange/Kind/uncompared``: a fresh
/// clone, a restore, a lost `.tablesync/`, a git merge or revert).
public struct AdoptionReport: Sendable, Equatable {
    /// Files that hold the server's copy as it is: indexed as synced, nothing sent.
    public var unchanged = 0
    /// Files the server had moved on from without them saying anything else: they now hold the server's copy
    /// (or are removed, when the server deleted the record).
    public var takenFromServer = 0
    /// Files edited on the version the server still has: queued as updates on that version.
    public var edited = 0
    /// Files whose record the server does not have: queued as inserts.
    public var created = 0
    /// Files that differ from a server copy that moved on, now under `conflicts/`.
    public var conflicts: [RecordKey] = []
    /// Files that differ from a server copy that moved on, settled by the `server-wins` or `client-wins` policy.
    public var settledByPolicy = 0

    /// Files compared with the server.
    public var compared: Int { unchanged + takenFromServer + edited + created + conflicts.count + settledByPolicy }

    /// An empty report.
    public init() {}
}

/// The rule for one file that carries the server's system properties at a version this store did not sync
/// (``LocalChange/Kind/uncompared``), once the server's copy is known: a pure function, tested alone.
enum AdoptionRule {
    enum Decision: Equatable {
        /// The file is the server's copy: index it as synced.
        case unchanged
        /// The server moved on and the file says nothing the server's copy does not: take the server's copy.
        case takeServer
        /// The server deleted the record and the file says nothing else: remove the file.
        case removeLocal
        /// An edit on `baseVersion`, the server's current version: the server still has the file's version and the
        /// file says something else (a hand edit), or the server has not moved since this store synced and git
        /// put other content here (a revert).
        case edited(baseVersion: String)
        /// The server has no such record: the file is an insert.
        case created
        /// The server moved on and the file says something else: it may be a hand edit or an old copy, and only
        /// a person (or the conflict policy) can tell.
        case conflict
    }

    /// Decides for the file holding `local` (which has a `version`), given the server's copy (`nil`: no such
    /// record, deleted ones included) and the version this store last synced (`nil`: never). Content is
    /// compared without the server-managed properties.
    static func decide(local: [String: JSONValue], server: [String: JSONValue]?, syncedVersion: String?) -> Decision {
        guard let server else { return .created }
        let sameContent = ServerRecord.content(local) == ServerRecord.content(server)
        if ServerRecord.isDeleted(server) { return sameContent ? .removeLocal : .conflict }
        guard let serverVersion = server[SystemProperty.version]?.stringValue else { return sameContent ? .takeServer : .conflict }
        if local[SystemProperty.version]?.stringValue == serverVersion {
            return sameContent ? .unchanged : .edited(baseVersion: serverVersion)
        }
        // The server has not moved since this store synced, so git put an older or other copy here: a change made
        // with git (a revert, a checkout of an old file), pushed like a hand edit.
        if syncedVersion == serverVersion { return sameContent ? .takeServer : .edited(baseVersion: serverVersion) }
        return sameContent ? .takeServer : .conflict
    }
}

/// Compares files not yet compared with the server (``LocalChange/Kind/uncompared``) with the server's copies,
/// before a push sends anything, and settles each by ``AdoptionRule``.
///
/// The server's copies come from one read of the table (keyset or `ge` + `$skip` pages of up to 1,000, deleted
/// records included, stopping once every file is matched), or, for a few files, one read per record. Each
/// page's files are read, decided and written in one durable step; edits and inserts go to the journal and are
/// pushed by the push that follows; conflicts go under `conflicts/` (or to the policy).
struct Adopter {
    let store: any PushingStore
    let connection: ServerConnection
    let policy: StoreSettings.ConflictPolicy
    let options: SyncOptions

    /// Up to this many files of a table are read one request each; more, and the table is read page by page.
    static let singleReadLimit = 20

    func adopt(_ files: [LocalChange]) async throws -> AdoptionReport {
        var report = AdoptionReport()
        let byTable = Dictionary(grouping: files, by: \.table)
        for table in byTable.keys.sorted() {
            let ids = Set(byTable[table]!.map(\.id))
            let syncedVersions = Dictionary(byTable[table]!.map { ($0.id, $0.baseVersion) }, uniquingKeysWith: { first, _ in first })
            let client = try await connection.client(table: table)
            var remaining = ids
            if ids.count <= Self.singleReadLimit {
                var copies: [[String: JSONValue]] = []
                for id in ids.sorted() {
                    if let copy = try await client.serverCopy(table: table, id: id) { copies.append(copy) }
                }
                try await settle(table: table, serverCopies: copies, syncedVersions: syncedVersions, remaining: &remaining, report: &report)
            } else {
                try await walk(table: table, client: client) { page in
                    try await settle(table: table, serverCopies: page, syncedVersions: syncedVersions, remaining: &remaining, report: &report)
                    return !remaining.isEmpty
                }
            }
            // What the server never sent, it does not have: inserts.
            if !remaining.isEmpty {
                let inserts = byTable[table]!.filter { remaining.contains($0.id) }
                    .map { LocalChange(kind: .created, table: table, id: $0.id, fileName: $0.fileName) }
                _ = try await store.queue(inserts)
                report.created += inserts.count
            }
        }
        return report
    }

    /// Reads every record of `table`, deleted ones included, in pages, handing each page's records to `body`
    /// until it returns `false` or the table ends.
    private func walk(table: String, client: TableClient,
                      _ body: ([[String: JSONValue]]) async throws -> Bool) async throws {
        let mode = try await Puller.pagingMode(options: options, connection: connection, client: client)
        let tableURL = client.http.baseURL + TablePath.table(table)
        var watermark: PullWatermark?
        var skip = 0
        var pageSize = options.pageSize ?? Puller.defaultPageSize
        var repeatCheck = PullPlan.RepeatedPageCheck()
        while true {
            let page: ServerPage
            (page, pageSize) = try await Puller.fetchPage(client: client, connection: connection, table: table, pageSize: pageSize) { size in
                PullPlan.query(mode: mode, baseFilter: nil, watermark: watermark, skip: skip, pageSize: size)
            }
            if page.itemCount == 0 { return }
            guard !page.cursorItems.isEmpty else {
                throw SyncError.malformedResponse(url: tableURL, reason: "none of the page's \(page.itemCount) records has an id and an updatedAt, so the comparison cannot move past them")
            }
            try repeatCheck.check(mode: mode, skip: skip, page: page.cursorItems, url: tableURL)
            let next = PullPlan.advance(mode: mode, watermark: watermark, skip: skip, page: page.cursorItems)
            if mode == .keyset, !PullPlan.advances(from: watermark, to: next.0) {
                throw SyncError.malformedResponse(url: tableURL, reason: "a page does not move past the previous one, so the comparison stopped instead of asking again")
            }
            (watermark, skip) = next
            guard try await body(page.records) else { return }
            if PullPlan.isLastPage(apiVersion: client.apiVersion, itemCount: page.itemCount, pageSize: pageSize, nextLink: page.nextLink) {
                return
            }
        }
    }

    /// Settles the files of `table` whose ids are in `remaining` and that `serverCopies` has copies of.
    private func settle(table: String, serverCopies: [[String: JSONValue]], syncedVersions: [String: String?],
                        remaining: inout Set<String>, report: inout AdoptionReport) async throws {
        let matched = serverCopies.filter { remaining.contains($0[SystemProperty.id]?.stringValue ?? "") }
        guard !matched.isEmpty else { return }
        // The server has these records: none of them may end up queued as an insert, read or not.
        for server in matched { remaining.remove(server[SystemProperty.id]!.stringValue!) }
        let files = store.recordFiles
        // Each file is read once, in parallel; a file gone or broken since the scan is left to the next scan.
        let read = concurrentMap(matched) { server -> (server: [String: JSONValue], local: RecordFile.Loaded, sent: SentFile)? in
            let id = server[SystemProperty.id]!.stringValue!
            guard let file = try? files.toSend(table: table, id: id, scanned: nil) else { return nil }
            return (server, file.loaded, file.sent)
        }
        var writes: [[String: JSONValue]] = []
        var removals: [String] = []
        var sent: [String: SentFile] = [:]
        var changes: [LocalChange] = []
        var conflicts: [(local: [String: JSONValue], server: [String: JSONValue])] = []
        for case let (server, local, sentFile)? in read {
            let id = local.id
            sent[id] = sentFile
            switch AdoptionRule.decide(local: local.record, server: server, syncedVersion: syncedVersions[id] ?? nil) {
            case .unchanged:
                writes.append(server)
                report.unchanged += 1
            case .takeServer:
                writes.append(server)
                report.takenFromServer += 1
            case .removeLocal:
                removals.append(id)
                report.takenFromServer += 1
            case .edited(let baseVersion):
                changes.append(LocalChange(kind: .modified, table: table, id: id, fileName: RecordFileName.fileName(for: id),
                                           baseVersion: baseVersion))
                report.edited += 1
            case .created:
                break
            case .conflict:
                switch (policy, ServerRecord.isDeleted(server)) {
                case (.serverWins, true):
                    removals.append(id)
                    report.settledByPolicy += 1
                case (.serverWins, false):
                    writes.append(server)
                    report.settledByPolicy += 1
                case (.clientWins, false):
                    changes.append(LocalChange(kind: .modified, table: table, id: id, fileName: RecordFileName.fileName(for: id),
                                               baseVersion: server[SystemProperty.version]?.stringValue))
                    report.settledByPolicy += 1
                case (.manual, _), (.clientWins, true):
                    conflicts.append((local.record, server))
                }
            }
        }
        // Files that changed since they were read keep their bytes; only the index learns the server's version.
        _ = try await store.applySynced(table: table, records: writes, removals: removals, guard: .sentContent(sent))
        for conflict in conflicts {
            let id = conflict.local[SystemProperty.id]!.stringValue!
            changes.append(LocalChange(kind: .modified, table: table, id: id, fileName: RecordFileName.fileName(for: id),
                                       baseVersion: conflict.local[SystemProperty.version]?.stringValue))
        }
        if !changes.isEmpty { _ = try await store.queue(changes) }
        for conflict in conflicts {
            let key = RecordKey(table: table, id: conflict.local[SystemProperty.id]!.stringValue!)
            guard let operation = await store.pendingOperation(key) else { continue }
            report.conflicts.append(key)
            let versions = "version \(conflict.local[SystemProperty.version]?.stringValue ?? "?") → \(conflict.server[SystemProperty.version]?.stringValue ?? "?")"
            try await store.writeConflict(ConflictRecord(
                operation: operation, local: ServerRecord.content(conflict.local), server: conflict.server, status: 412,
                reason: ServerRecord.isDeleted(conflict.server)
                    ? "compared with the server after a clone or a lost cache: the server deleted the record (\(versions)) and the file differs from its last copy"
                    : "compared with the server after a clone or a lost cache: the server's copy moved on (\(versions)) and the file differs from it; the file may be a hand edit or an older copy"))
        }
    }
}
