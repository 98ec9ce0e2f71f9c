import SyncProtocol
import TableSyncStorage

/// What `restore` or `revert` queued: records whose content from git's history became local changes, made on the
/// versions the store holds now, so that the next push sends them with `If-Match` like any edit.
public struct RestoreReport: Sendable, Equatable {
    /// The commit the contents came from, as git names it.
    public var source = ""
    /// Records whose content was put back: an update on the version the store holds.
    public var updated: [RecordKey] = []
    /// Records the store no longer holds, put back: an insert.
    public var inserted: [RecordKey] = []
    /// Records the source did not have, removed: a delete.
    public var deleted: [RecordKey] = []
    /// Records that already held the source's content (or that neither side has): nothing queued.
    public var unchanged: [RecordKey] = []
}

/// A restore or revert refused: what git could not give, or what the store cannot take.
public struct RestoreRefused: CategorizedError, Equatable {
    /// What was refused, and what to do.
    public let reason: String
    /// Always ``FailureKind/usage``: the arguments name something the store's history does not have.
    public var kind: FailureKind { .usage }
    public var description: String { reason }
}

extension SyncContext {
    /// Makes the records `keys` hold again what they held in the commit `revision` (git's `restore --source`): for
    /// each, an update on the version the store holds now (a conflict at the push if the server moved since), an
    /// insert when the store no longer holds the record, or a delete when `revision` did not have it (through the
    /// mass-delete brake unless `allowingMassDelete`). Only the records' own properties come from `revision`; the
    /// system properties stay the store's.
    /// - Throws: ``RestoreRefused`` when the store is not in git, `revision` is no commit, or a record file in it is
    ///   broken; ``MassDeleteRefused``; ``StoreError`` when an operation cannot be queued.
    @discardableResult
    public func restore(
        _ keys: [RecordKey], from revision: String, allowingMassDelete: Bool = false
    ) throws -> RestoreReport {
        try requireWritable()
        let repository = try restoringRepository()
        let commit = try Self.commit(revision, in: repository)
        for table in Set(keys.map(\.table)) { try requireTable(table) }
        let sources = try contents(of: keys, at: commit, repository)
        var report = try apply(keys, allowingMassDelete: allowingMassDelete) { key, _ in sources[key] ?? nil }
        report.source = revision
        return report
    }

    /// Undoes the record changes of the commit `revision` (git's `revert`, for the store's records alone): each
    /// property it changed in a record goes back to its first parent's value, unless the record changed it again
    /// since; a record it created is deleted, one it deleted comes back (``RecordRevert``). Queued as
    /// ``restore(_:from:allowingMassDelete:)`` queues. The commit stays in history; the undo is a set of new edits.
    /// - Throws: as ``restore(_:from:allowingMassDelete:)``; ``RestoreRefused`` for a commit without a parent.
    @discardableResult
    public func revert(_ revision: String, allowingMassDelete: Bool = false) throws -> RestoreReport {
        try requireWritable()
        let repository = try restoringRepository()
        let commit = try Self.commit(revision, in: repository)
        guard let parent = try? Self.commit(commit + "^", in: repository) else {
            throw RestoreRefused(
                reason: "commit \(revision) has no parent to go back to; restore its records from another commit")
        }
        // Paths relative to the store, NUL-separated: `tables/<table>/<file>`.
        let changed = try repository.run(
            ["diff-tree", "-r", "-z", "--no-renames", "--name-only", "--relative", parent, commit, "--", "tables"])
        var keys: [RecordKey] = []
        for path in changed.bytes.split(separator: 0).map({ String(decoding: $0, as: UTF8.self) }) {
            let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, parts[0] == "tables", settings.tables.contains(parts[1]),
                RecordFileName.looksLikeRecordFile(parts[2])
            else { continue }
            guard
                let id = RecordFileName.id(forFileName: parts[2])
                    ?? recordID(at: path, in: [parent, commit], repository)
            else { continue }
            keys.append(RecordKey(table: parts[1], id: id))
        }
        let before = try contents(of: keys, at: parent, repository)
        let after = try contents(of: keys, at: commit, repository)
        var report = try apply(keys, allowingMassDelete: allowingMassDelete) { key, now in
            RecordRevert.content(before: before[key] ?? nil, after: after[key] ?? nil, now: now)
        }
        report.source = revision
        return report
    }

    /// The record each of `keys` holds in `commit`, by key (`nil` for one the commit lacks), its synced mark left
    /// out; a broken file is refused by its path.
    private func contents(
        of keys: [RecordKey], at commit: String, _ repository: GitRepository
    ) throws -> [RecordKey: [String: JSONValue]?] {
        let paths = keys.map { "\(commit):./tables/\($0.table)/\(RecordFileName.fileName(for: $0.id))" }
        var records: [RecordKey: [String: JSONValue]?] = [:]
        for (index, bytes) in try repository.objectContents(paths).enumerated() {
            records[keys[index]] = try bytes.map { try Self.record($0, path: paths[index]) }
        }
        return records
    }

    /// The id a record file whose name does not spell it holds (a long id's hashed name), read from the first of
    /// `commits` that has the file.
    private func recordID(at path: String, in commits: [String], _ repository: GitRepository) -> String? {
        let contents = (try? repository.objectContents(commits.map { "\($0):./\(path)" })) ?? []
        return contents.compactMap { $0 }.lazy.compactMap { bytes in
            (try? JSONParser.parse(RecordFile.jsonText(bytes).text))?[SystemProperty.id]?.stringValue
        }.first
    }

    /// Queues for each of `keys` the content `desired` gives from the record as the store holds it now (`nil`: the
    /// store has none), or its removal where `desired` gives `nil`.
    private func apply(
        _ keys: [RecordKey], allowingMassDelete: Bool,
        desired: (RecordKey, [String: JSONValue]?) throws -> [String: JSONValue]?
    ) throws -> RestoreReport {
        var report = RestoreReport()
        var current: [RecordKey: [String: JSONValue]] = [:]
        var changes: [(key: RecordKey, record: [String: JSONValue]?)] = []
        for key in keys {
            let now = try recordFiles.load(table: key.table, id: key.id).map { SyncedMark.removed(from: $0.record) }
            current[key] = now
            changes.append((key, try desired(key, now)))
        }
        if !allowingMassDelete {
            let deletes = Dictionary(grouping: changes.filter { $0.record == nil && current[$0.key] != nil }) {
                $0.key.table
            }
            for (table, removing) in deletes.sorted(by: { $0.key < $1.key }) {
                let records = try recordFiles.count(table: table)
                if MassDeleteBrake.refuses(removing: removing.count, of: records) {
                    throw MassDeleteRefused(
                        table: table, removing: removing.count, localRecords: records, side: .restore)
                }
            }
        }
        for (key, restored) in changes {
            switch (current[key], restored) {
            case (let now?, let restored?):
                var record = restored
                for name in SystemProperty.serverManaged { record[name] = now[name] }
                record[SystemProperty.id] = .string(key.id)
                if ServerRecord.content(record) == ServerRecord.content(now) {
                    report.unchanged.append(key)
                } else {
                    _ = try update(record, table: key.table)
                    report.updated.append(key)
                }
            case (nil, let restored?):
                try bringBack(restored, key: key)
                report.inserted.append(key)
            case (.some, nil):
                try delete(id: key.id, table: key.table)
                report.deleted.append(key)
            case (nil, nil):
                report.unchanged.append(key)
            }
        }
        return report
    }

    /// Writes `record` for a record the store no longer holds and queues its return. A delete still pending is
    /// taken back, and a file removed by hand is written again: the content goes out as an update on the version
    /// the store knows the record by. Otherwise the push
    /// asks the server to bring back its deleted copy and sends the content over it, or inserts it when the server
    /// has no copy at all (``Undeleter``).
    private func bringBack(_ restored: [String: JSONValue], key: RecordKey) throws {
        var record = restored
        for name in SystemProperty.serverManaged { record[name] = nil }
        record[SystemProperty.id] = .string(key.id)
        if let problem = RecordNesting.problem(with: record) {
            throw StoreError.invalidRecord(table: key.table, reason: problem)
        }
        let pendingDelete = journal.pending(key).flatMap { $0.kind == .delete ? $0 : nil }
        if let pendingDelete { journal.remove(sequences: [pendingDelete.sequence]) }
        // The version the record is known by: its pending delete's, or the index's for a file removed by hand and
        // not pushed yet (the server still has the record).
        let known = try pendingDelete?.baseVersion ?? syncedVersion(table: key.table, id: key.id)
        try recordFiles.write(record, table: key.table, id: key.id)
        if var operation = try journal.enqueue(.update, table: key.table, id: key.id, baseVersion: known),
            known == nil, operation.kind == .update
        {
            operation.undelete = true
            journal.replace(operation)
        }
        try saveJournal()
    }

    /// The record a file of git's history holds, its synced mark left out; a broken file is refused by its path.
    private static func record(_ bytes: [UInt8], path: String) throws -> [String: JSONValue] {
        let fileName = String(path.split(separator: "/").last ?? "")
        switch RecordFile.check(bytes: bytes, fileName: fileName, relativePath: path) {
        case .success(let loaded): return SyncedMark.removed(from: loaded.record)
        case .failure(let problem): throw RestoreRefused(reason: "\(problem)")
        }
    }

    /// The repository the store's history is in.
    private func restoringRepository() throws -> GitRepository {
        guard let repository = gitRepository() else {
            throw RestoreRefused(reason: "the store at \(layout.root) is not in a git work tree: it has no history")
        }
        if let underway = try repository.operationInProgress() { throw RestoreRefused(reason: underway) }
        return repository
    }

    /// The commit `revision` names, or a refusal that names it.
    private static func commit(_ revision: String, in repository: GitRepository) throws -> String {
        let answer = try repository.run(
            ["rev-parse", "-q", "--verify", "--end-of-options", revision + "^{commit}"], allowing: [1, 128])
        guard answer.status == 0, GitObjectName.isValid(answer.text) else {
            throw RestoreRefused(reason: "git knows no commit named \(revision) in the store's repository")
        }
        return answer.text
    }
}
