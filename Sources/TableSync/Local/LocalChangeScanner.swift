import SyncProtocol
import TableSyncStorage

/// Finds hand edits: compares each table directory with its ``StatIndex``, the journal and, in git, `HEAD`
/// (``GitBaseline``), reading only the files whose `stat` changed. Read-only; the push turns the result into journal
/// operations. Each table is scanned in three steps: the join of the listing with the index (``IndexedListing``), the
/// classification of each file that changed (``FileChangeRule``), and the files that are missing.
struct LocalChangeScanner {
    let layout: StoreLayout
    /// `HEAD`'s view of the store, when it is in git.
    var git: GitBaseline?

    func scan(tables: [String], journal: Journal) throws -> LocalScan {
        var reads = ReadRecordFiles(limit: 0)
        return try scan(tables: tables, journal: journal, keeping: &reads)
    }

    /// Scans as ``scan(tables:journal:)`` does, and keeps in `reads` (up to its limit) the files of the changes
    /// found, as read. Limited to `scope`, a table is joined with its index on the named files alone, and a table
    /// with none is passed over; but a table whose tree in `HEAD` moved since a push last reconciled it (a commit,
    /// a reset that touched no file) is scanned whole, for the files `HEAD` has that are gone.
    func scan(
        tables: [String], journal: Journal, scope: ScanScope = .everything, keeping reads: inout ReadRecordFiles
    ) throws -> LocalScan {
        var scan = LocalScan()
        scan.headPosition = git?.position ?? .unknown
        for table in tables {
            let firstProblem = scan.problems.count
            let joined: IndexedListing
            if let names = scope.names(in: table), git.map({ $0.trees[table] == $0.state.trees[table] }) ?? true {
                if names.isEmpty { continue }
                joined = try IndexedListing(layout: layout, table: table, names: names)
            } else {
                joined = try IndexedListing(layout: layout, table: table) {
                    try git?.vouchedFiles(table: table, layout: layout)
                }
            }
            scan.problems += joined.problems
            scan.leftovers += joined.leftovers
            scan.filesSeen += joined.listedCount
            scan.filesHashed += joined.changed.count
            try classify(joined, table: table, journal: journal, into: &scan, keeping: &reads)
            if let vouched = joined.vouched, vouched.count > 0 { scan.vouched[table] = vouched }
            try findMissing(joined, table: table, journal: journal, into: &scan)
            holdBackRenamed(table: table, problemsFrom: firstProblem, in: &scan)
            scan.problems[firstProblem...].sort { $0.path < $1.path }
        }
        scan.changes.sort { ($0.table, $0.fileName) < ($1.table, $1.fileName) }
        return scan
    }

    /// Drops the deletes of records whose content sits in a file named for another id (a `git mv`, a copy): the
    /// record is not gone, only misnamed, and nothing is sent for it until its file has its name again. The problem
    /// says so.
    private func holdBackRenamed(table: String, problemsFrom first: Int, in scan: inout LocalScan) {
        var misnamed: [String: Int] = [:]
        for index in scan.problems.indices[first...] {
            if let id = scan.problems[index].misnamedRecord { misnamed[id] = index }
        }
        guard !misnamed.isEmpty else { return }
        scan.changes.removeAll { change in
            guard change.table == table, [.deleted, .missing, .removedByGit].contains(change.kind),
                let index = misnamed[change.id]
            else { return false }
            let problem = scan.problems[index]
            scan.problems[index] = RecordFileProblem(
                path: problem.path,
                reason: problem.reason + "; until then, the record's missing file \(change.fileName) is no delete",
                misnamedRecord: problem.misnamedRecord)
            return true
        }
    }

    /// The versions of the entries of `entries` made without reading their file (``StatIndex/Entry/versionIsInBlob``),
    /// read from their blobs, with every other entry's version: what ``IndexedVersions/version(of:)`` answers.
    /// - Throws: ``StoreError/damagedIndex(file:reason:)`` when git cannot give such a blob's record (the store is
    ///   out of git now, or git lost the object): its base version is not known, and nothing is guessed.
    private func blobVersions(of entries: [StatIndex.Entry], table: String) throws -> IndexedVersions {
        let inBlobs = entries.filter(\.versionIsInBlob)
        guard !inBlobs.isEmpty else { return IndexedVersions() }
        let read = try git?.versions(ofBlobs: Array(Set(inBlobs.map(\.contentHash)))) ?? [:]
        if let missing = inBlobs.first(where: { read[$0.contentHash] == nil }) {
            throw GitBaseline.versionUnknown(of: missing, table: table, inGit: git != nil)
        }
        return IndexedVersions(inBlobs: read)
    }

    /// Reads the changed files (on every core) and sorts each into a change, a problem, or nothing.
    private func classify(
        _ joined: IndexedListing, table: String, journal: Journal, into scan: inout LocalScan,
        keeping reads: inout ReadRecordFiles
    ) throws {
        let directory = layout.tableDirectory(table)
        let opened = joined.changed.isEmpty ? nil : try OpenDirectory(directory)
        let examined = concurrentMap(joined.changed) { file in
            Result { try examine(file, in: directory, opened: opened) }
        }
        // Versions left in blobs are read for the files that changed, not for those found as indexed.
        let versions = try blobVersions(
            of: zip(joined.changed, examined).compactMap { file, result in
                if case .success(.asIndexed) = result { return nil }
                return file.entry
            }, table: table)
        var coveredElsewhere: [(name: String, change: LocalChange, read: ReadRecordFile)] = []
        for (file, result) in zip(joined.changed, examined) {
            guard case let (id, hash, facts, read)? = try Self.readFile(result, into: &scan) else { continue }
            // A stamped copy told from its bytes was not parsed: the few outcomes that hand the record on read it
            // (one changed since is left to the next scan).
            func loaded() -> RecordFile.Loaded? {
                if let read { return read }
                return try? RecordFile.check(
                    bytes: FileSystem.readFile(directory + "/" + file.name), fileName: file.name,
                    relativePath: file.relativePath
                ).get()
            }
            let key = RecordKey(table: table, id: id)
            let indexedVersion: String?? = file.entry.map(versions.version(of:))
            func change(_ kind: LocalChange.Kind, baseVersion: String? = indexedVersion ?? nil) -> LocalChange {
                LocalChange(kind: kind, table: table, id: id, fileName: file.name, baseVersion: baseVersion)
            }
            switch FileChangeRule.decide(
                facts, indexedVersion: indexedVersion, editedWhileSent: file.entry?.isEditedWhileSent ?? false,
                pending: journal.pending(key)?.kind)
            {
            case .covered:
                if git != nil, let pending = journal.pending(key), !pending.isSent(by: journal.origin),
                    let loaded = loaded()
                {
                    coveredElsewhere.append(
                        (
                            file.name, change(.modified, baseVersion: pending.baseVersion),
                            ReadRecordFile(loaded: loaded, hash: hash, status: file.status, clock: joined.clock)
                        ))
                }
            case .deleteConflict:
                scan.changes.append(change(.deleteConflict, baseVersion: journal.pending(key)?.baseVersion))
            case .serverCopy:
                scan.changes.append(change(.serverCopy, baseVersion: facts.version))
                scan.serverCopies[table, default: []].append(
                    StatIndex.Entry(
                        fileName: file.name, id: id, status: file.status, contentHash: hash, version: facts.version))
            case .uncompared:
                scan.changes.append(change(.uncompared))
            case .created, .modified:
                guard let loaded = loaded() else { continue }
                scan.changes.append(change(file.entry == nil ? .created : .modified))
                reads.keep(
                    ReadRecordFile(loaded: loaded, hash: hash, status: file.status, clock: joined.clock), for: key)
            }
        }
        try findOwnEdits(of: coveredElsewhere, table: table, into: &scan, keeping: &reads)
    }

    /// What was read of a changed file: its id, the content hash of its bytes (``ContentHash``), what the rule needs
    /// of it, and the record as parsed, unless its bytes alone told a stamped copy; `nil` for a file as indexed, or
    /// broken (its problem is noted in `scan`).
    private static func readFile(
        _ result: Result<Examined, any Error>, into scan: inout LocalScan
    ) throws -> (id: String, hash: String, facts: FileChangeRule.File, loaded: RecordFile.Loaded?)? {
        switch try result.get() {
        case .asIndexed: return nil
        case .broken(let problem):
            scan.problems.append(problem)
            return nil
        case .read(let id, let hash, let facts, let loaded): return (id, hash, facts, loaded)
        }
    }

    /// Of the files whose record has an operation another clone queued (it came with a merge, and that clone sends
    /// it), those whose record differs from `HEAD`'s were edited here since: an edit of this clone's, found as a
    /// change (``Journal/enqueue(_:table:id:baseVersion:item:existing:)`` makes the operation this clone's), never
    /// held behind the other clone's operation. A file holding `HEAD`'s record is the other clone's content, left to
    /// it, however git wrote it out (CRLF under `core.autocrlf`, another layout).
    private func findOwnEdits(
        of candidates: [(name: String, change: LocalChange, read: ReadRecordFile)], table: String,
        into scan: inout LocalScan, keeping reads: inout ReadRecordFiles
    ) throws {
        guard let git, !candidates.isEmpty else { return }
        let committed = try git.committedContents(table: table, names: candidates.map(\.name))
        for candidate in candidates {
            let here = candidate.read.loaded
            if let bytes = committed[candidate.name],
                bytes == here.bytes
                    || (try? RecordFile.check(bytes: bytes, fileName: candidate.name, relativePath: "HEAD").get())?
                        .record == here.record
            {
                continue
            }
            scan.changes.append(candidate.change)
            reads.keep(candidate.read, for: candidate.change.key)
        }
    }

    /// The files missing from the table: entries whose file is gone, pending inserts and updates whose file is
    /// gone, and (in git) files `HEAD` has that neither the listing nor the index knows.
    private func findMissing(
        _ joined: IndexedListing, table: String, journal: Journal, into scan: inout LocalScan
    ) throws {
        try findUnlisted(joined, table: table, journal: journal, into: &scan)
        let known = try findPendingWithoutFile(joined, table: table, journal: journal, into: &scan)
        if let git {
            try findCommittedBeyondIndex(joined, git: git, known: known, table: table, journal: journal, into: &scan)
        }
    }

    /// The index entries whose file is not listed, as ``FileChangeRule/decideMissing(pending:inHead:)`` sorts them:
    /// deleted by hand, or removed by git.
    private func findUnlisted(
        _ joined: IndexedListing, table: String, journal: Journal, into scan: inout LocalScan
    ) throws {
        // A file is named after its id (RecordFile.check), so a listed name stands for its record.
        let unlisted = joined.unlisted.filter { journal.pending(RecordKey(table: table, id: $0.id))?.kind != .delete }
        let versions = try blobVersions(of: unlisted, table: table)
        // A table git has never committed tells nothing: its missing files are deleted by hand, as outside git.
        let committing = git.flatMap { $0.trees[table] == nil ? nil : $0 }
        let inHead = try committing.map { git in
            try git.committed(
                table: table,
                names: unlisted.filter {
                    journal.pending(RecordKey(table: table, id: $0.id)) == nil
                }.map(\.fileName))
        }
        let notCheckedOut =
            try git.map { git in
                try git.notCheckedOut(
                    table: table, names: unlisted.filter { inHead?.contains($0.fileName) ?? false }.map(\.fileName))
            } ?? []
        let removedByBranch =
            try git.map { git in
                try git.atForkPoint(
                    table: table,
                    names: unlisted.filter { entry in inHead.map { !$0.contains(entry.fileName) } ?? false }.map(
                        \.fileName))
            } ?? []
        for entry in unlisted where !notCheckedOut.contains(entry.fileName) {
            let pending = journal.pending(RecordKey(table: table, id: entry.id))?.kind
            let kind: LocalChange.Kind
            switch FileChangeRule.decideMissing(pending: pending, inHead: inHead.map { $0.contains(entry.fileName) }) {
            case .covered: continue
            case .deleted: kind = .deleted
            // This branch's own history removed it: a delete once compared with the server, as a file only `HEAD`
            // knew would be.
            case .removedByGit: kind = removedByBranch.contains(entry.fileName) ? .missing : .removedByGit
            }
            scan.changes.append(
                LocalChange(
                    kind: kind, table: table, id: entry.id, fileName: entry.fileName,
                    baseVersion: versions.version(of: entry)))
        }
    }

    /// The pending inserts and updates whose file is neither listed nor indexed, found deleted. Returns the names of
    /// the files known to be gone: these and the unlisted entries'.
    private func findPendingWithoutFile(
        _ joined: IndexedListing, table: String, journal: Journal, into scan: inout LocalScan
    ) throws -> Set<String> {
        var known = Set(joined.unlisted.map(\.fileName))
        for operation in journal.operations(inTable: table) where operation.kind != .delete {
            let fileName = RecordFileName.fileName(for: operation.id)
            guard !known.contains(fileName), try !joined.isListed(fileName),
                try joined.index.entry(named: fileName) == nil
            else { continue }
            known.insert(fileName)
            scan.changes.append(
                LocalChange(
                    kind: .deleted, table: table, id: operation.id, fileName: fileName,
                    baseVersion: operation.baseVersion))
        }
        return known
    }

    /// The files `HEAD` has that are gone while the index never knew them (and are not among the `known` ones):
    /// compared with the server, then deleted on the version `HEAD` holds unless the server deleted them too.
    private func findCommittedBeyondIndex(
        _ joined: IndexedListing, git: GitBaseline, known: Set<String>, table: String, journal: Journal,
        into scan: inout LocalScan
    ) throws {
        // The file there, the cheapest test, first, on the name's bytes: in a clone every file is.
        var hint = 0
        guard
            let committed = try git.filesBeyondIndex(
                table: table, indexIsEmpty: joined.indexIsEmpty, staged: joined.gitIndex,
                keeping: { try RecordFileName.looksLikeRecordFile($0) && !joined.isListed($0, hint: &hint) })
        else { return }
        var missing = try committed.filter { name in
            try !known.contains(name) && Self.isUnknown(name, table: table, index: joined.index, journal: journal)
        }
        let notCheckedOut = try git.notCheckedOut(table: table, names: missing)
        missing.removeAll { notCheckedOut.contains($0) }
        let blobs = try git.blobs(table: table, names: missing)
        let versions = try git.versions(ofBlobs: missing.compactMap { blobs[$0] })
        for name in missing {
            // A file without a version was never on the server: nothing to delete there.
            guard let version = blobs[name].flatMap({ versions[$0] }), let id = RecordFileName.id(forFileName: name)
            else { continue }
            scan.changes.append(LocalChange(kind: .missing, table: table, id: id, fileName: name, baseVersion: version))
        }
        if let tree = git.trees[table] { scan.reconciledTrees[table] = tree }
    }

    /// Whether the committed record file `name` is one the store knows nothing of: named for an id, with neither an
    /// entry in `index` nor an operation pending in `journal`. Only such a file, once gone, can be a delete nobody saw.
    static func isUnknown(_ name: String, table: String, index: StatIndex, journal: Journal) throws -> Bool {
        guard let id = RecordFileName.id(forFileName: name) else { return false }
        return try journal.pending(RecordKey(table: table, id: id)) == nil && index.entry(named: name) == nil
    }

    /// The server version of each index entry, those left in their blobs read from git.
    private struct IndexedVersions {
        /// The version in each blob read, by blob.
        var inBlobs: [String: String] = [:]

        func version(of entry: StatIndex.Entry) -> String? {
            entry.versionIsInBlob ? inBlobs[entry.contentHash] : entry.version
        }
    }

    private enum Examined: Sendable {
        /// Its bytes are the indexed ones after all (touched, not edited).
        case asIndexed
        case broken(RecordFileProblem)
        /// Read and valid: the record's id, the content hash of its bytes, what the rule needs of it, and the record as
        /// parsed, unless its bytes alone told a stamped copy (``SyncedMark/intactCopy(_:)``, the common case of a
        /// scan without its index: a clone, a lost cache).
        case read(id: String, hash: String, FileChangeRule.File, loaded: RecordFile.Loaded?)
    }

    /// Reads one changed file and decides what it is. Touches nothing shared, so files are examined in parallel.
    private func examine(
        _ file: IndexedListing.ChangedFile, in directory: String, opened: OpenDirectory?
    ) throws -> Examined {
        let path = directory + "/" + file.name
        let bytes =
            try opened.map { try FileSystem.readFile(file.name, in: $0, path: path, expectedSize: file.status.size) }
            ?? FileSystem.readFile(path, expectedSize: file.status.size)
        let hash = ContentHash.of(bytes)
        if let entry = file.entry, hash == entry.contentHash { return .asIndexed }
        // A copy whose name is not its id's (a copy, a `git mv`) is parsed, for the check to name the problem.
        if let copy = SyncedMark.intactCopy(bytes), RecordFileName.fileName(for: copy.id) == file.name {
            let facts = FileChangeRule.File(version: copy.version, carriesServerVersion: true, markIntact: true)
            return .read(id: copy.id, hash: hash, facts, loaded: nil)
        }
        switch RecordFile.check(bytes: bytes, fileName: file.name, relativePath: file.relativePath) {
        case .success(let loaded):
            let facts = FileChangeRule.File(
                version: loaded.record[SystemProperty.version]?.stringValue,
                carriesServerVersion: ServerRecord.isServerCopy(loaded.record),
                markIntact: SyncedMark.isIntact(
                    loaded.record, bytes: bytes, bytesAreCanonical: loaded.bytesAreCanonical))
            return .read(id: loaded.id, hash: hash, facts, loaded: loaded)
        case .failure(let problem): return .broken(problem)
        }
    }
}
