import SyncProtocol

/// Finds hand edits: compares each table directory with its ``StatIndex``, the journal and, in git, `HEAD`
/// (``GitBaseline``), reading only the files whose `stat` changed. Read-only; the push turns the result into journal
/// operations. Each table is scanned in three steps: the join of the listing with the index, the classification
/// of each file that changed (``FileChangeRule``), and the files that are missing.
struct LocalChangeScanner {
    let layout: StoreLayout
    /// `HEAD`'s view of the store, when it is in git.
    var git: GitBaseline?

    func scan(tables: [String], journal: Journal) throws -> LocalScan {
        var reads = ReadRecordFiles(limit: 0)
        return try scan(tables: tables, journal: journal, keeping: &reads)
    }

    /// Scans as ``scan(tables:journal:)`` does, and keeps in `reads` (up to its limit) the files of the changes
    /// found, as read.
    func scan(tables: [String], journal: Journal, keeping reads: inout ReadRecordFiles) throws -> LocalScan {
        var scan = LocalScan()
        scan.headPosition = git?.position ?? .unknown
        for table in tables {
            let firstProblem = scan.problems.count
            let joined = try join(table: table, problems: &scan.problems)
            scan.filesSeen += joined.listed.count
            scan.filesHashed += joined.changed.count
            try classify(joined, table: table, journal: journal, into: &scan, keeping: &reads)
            try findMissing(joined, table: table, journal: journal, into: &scan)
            scan.problems[firstProblem...].sort { $0.path < $1.path }
        }
        scan.changes.sort { ($0.table, $0.fileName) < ($1.table, $1.fileName) }
        return scan
    }

    /// A table's listing walked beside its index: the files whose `stat` the index does not vouch for, and the
    /// entries whose file is gone.
    private struct Join {
        let listing: DirectoryListing
        let index: StatIndex
        /// The file-timestamp clock before the listing's `stat`s (see ``SentFile``).
        let clock: Int64
        /// Files whose `stat` changed (or that have no entry), to read.
        var changed: [ChangedFile] = []
        /// Entries whose file is not listed.
        var unlisted: [StatIndex.Entry] = []
        /// The record files listed, as positions in the listing, in name order.
        var listed: [Int] = []
        /// Whether the index has no entry at all (a clone, a lost cache).
        var indexIsEmpty = true
    }

    private func join(table: String, problems: inout [RecordFileProblem]) throws -> Join {
        let directory = layout.tableDirectory(table)
        // Before the listing's `stat`s: a file changed after them gets a later time (see ``SentFile``).
        let clock = FileSystem.timestampClockNanoseconds()
        // The listing is sorted and walked beside the index's lines in the same order, the index read from disk
        // as the walk goes, never held whole; the files' `stat`s are taken on the other cores as the walk goes.
        // Names stay bytes of the listing; a String is made only for a file that is reported or read.
        var joined = Join(
            listing: try DirectoryListing(directory).sorted(), index: try StatIndex.load(layout: layout, table: table),
            clock: clock)
        let listing = joined.listing
        func relativePath(_ name: String) -> String { "tables/\(table)/\(name)" }
        joined.listed.reserveCapacity(listing.count)
        var walk = try IndexWalk(joined.index.sortedLines())
        joined.indexIsEmpty = walk.indexIsEmpty
        try listing.withNames { names in
            try listing.forEachStatus { position, status in
                guard let status else { return }
                let name = names[position]
                guard RecordFileName.looksLikeRecordFile(name) else {
                    if !RecordFileName.isHidden(name) {
                        problems.append(
                            RecordFileProblem(
                                path: relativePath(listing.name(at: position)),
                                reason: "not a record file (record files are named <id>.json); it is ignored"))
                    }
                    return
                }
                guard status.isRegularFile else {
                    problems.append(
                        RecordFileProblem(
                            path: relativePath(listing.name(at: position)), reason: "not a regular file; it is ignored")
                    )
                    return
                }
                joined.listed.append(position)
                guard case .changed(let indexed) = try walk.match(name, status: status) else { return }
                let fileName = listing.name(at: position)
                joined.changed.append(
                    ChangedFile(name: fileName, relativePath: relativePath(fileName), status: status, entry: indexed))
            }
        }
        joined.unlisted = try walk.finish()
        return joined
    }

    /// The stat index's lines walked in name order beside a table's sorted listing: each listed record file is
    /// matched with its line, and the lines passed over are entries whose file is not listed.
    private struct IndexWalk {
        private var lines: IndexItemMerge
        /// `false` once the walk is past the last line.
        private var more: Bool
        /// The entries passed over so far.
        private var unlisted: [StatIndex.Entry] = []
        /// Whether the index has no line at all.
        let indexIsEmpty: Bool

        /// What the index says of a listed file.
        enum Match {
            /// Its line vouches for its `stat`: nothing to read.
            case unchanged
            /// To read: its `stat` changed, or it has no entry (`indexed` is `nil`).
            case changed(indexed: StatIndex.Entry?)
        }

        /// A walk from the first of `lines`.
        init(_ lines: IndexItemMerge) throws {
            self.lines = lines
            more = try self.lines.step()
            indexIsEmpty = !more
        }

        /// What the index says of the listed file `name`, whose `stat` is `status`; the lines named before it are
        /// passed over. Names come in the index's order (``StatIndexLine/compare(_:_:)``), each once.
        mutating func match(_ name: UnsafeBufferPointer<UInt8>, status: FileSystem.Status) throws -> Match {
            var order = 1
            while more {
                order = lines.compareName(to: name)
                guard order < 0 else { break }
                if let entry = try lines.item().entry { unlisted.append(entry) }
                more = try lines.step()
            }
            guard more && order == 0 else { return .changed(indexed: nil) }
            // Most files of a scan end here, matched without a String made or a field parsed but the four compared.
            if lines.vouches(for: status) {
                more = try lines.step()
                return .unchanged
            }
            let indexed = try lines.item().entry
            more = try lines.step()
            return .changed(indexed: indexed)
        }

        /// Passes over the lines left; returns every entry passed over, whose file is not listed.
        mutating func finish() throws -> [StatIndex.Entry] {
            while more {
                if let entry = try lines.item().entry { unlisted.append(entry) }
                more = try lines.step()
            }
            return unlisted
        }
    }

    /// Reads the changed files (on every core) and sorts each into a change, a problem, or nothing.
    private func classify(
        _ joined: Join, table: String, journal: Journal, into scan: inout LocalScan,
        keeping reads: inout ReadRecordFiles
    ) throws {
        let directory = layout.tableDirectory(table)
        let examined = concurrentMap(joined.changed) { file in Result { try examine(file, in: directory) } }
        for (file, result) in zip(joined.changed, examined) {
            let loaded: RecordFile.Loaded
            let facts: FileChangeRule.File
            let hash: String
            switch try result.get() {
            case .asIndexed: continue
            case .broken(let problem):
                scan.problems.append(problem)
                continue
            case .read(let value, let contentHash, let read):
                (loaded, hash, facts) = (value, contentHash, read)
            }
            let key = RecordKey(table: table, id: loaded.id)
            let indexedVersion: String?? = file.entry.map { $0.version }
            func change(_ kind: LocalChange.Kind, baseVersion: String? = file.entry?.version) -> LocalChange {
                LocalChange(kind: kind, table: table, id: loaded.id, fileName: file.name, baseVersion: baseVersion)
            }
            switch FileChangeRule.decide(
                facts, indexedVersion: indexedVersion, editedWhileSent: file.entry?.isEditedWhileSent ?? false,
                pending: journal.pending(key)?.kind)
            {
            case .covered:
                continue
            case .deleteConflict:
                scan.changes.append(change(.deleteConflict, baseVersion: journal.pending(key)?.baseVersion))
            case .serverCopy:
                scan.changes.append(change(.serverCopy, baseVersion: facts.version))
                scan.serverCopies[table, default: []].append(
                    StatIndex.Entry(
                        fileName: file.name, id: loaded.id, status: file.status, contentHash: hash,
                        version: facts.version))
            case .uncompared:
                scan.changes.append(change(.uncompared))
            case .created, .modified:
                scan.changes.append(change(file.entry == nil ? .created : .modified))
                reads.keep(
                    ReadRecordFile(loaded: loaded, hash: hash, status: file.status, clock: joined.clock), for: key)
            }
        }
    }

    /// The files missing from the table: entries whose file is gone, pending inserts and updates whose file is
    /// gone, and (in git) files `HEAD` has that neither the listing nor the index knows.
    private func findMissing(_ joined: Join, table: String, journal: Journal, into scan: inout LocalScan) throws {
        try findUnlisted(joined, table: table, journal: journal, into: &scan)
        let known = try findPendingWithoutFile(joined, table: table, journal: journal, into: &scan)
        if let git {
            try findCommittedBeyondIndex(joined, git: git, known: known, table: table, journal: journal, into: &scan)
        }
    }

    /// The index entries whose file is not listed, as ``FileChangeRule/decideMissing(pending:inHead:)`` sorts them:
    /// deleted by hand, or removed by git.
    private func findUnlisted(_ joined: Join, table: String, journal: Journal, into scan: inout LocalScan) throws {
        // A file is named after its id (RecordFile.check), so a listed name stands for its record.
        let unlisted = joined.unlisted.filter { journal.pending(RecordKey(table: table, id: $0.id))?.kind != .delete }
        // A table git has never committed tells nothing: its missing files are deleted by hand, as outside git.
        let committing = git.flatMap { $0.trees[table] == nil ? nil : $0 }
        let inHead = try committing.map { git in
            try git.committed(
                table: table,
                names: unlisted.filter {
                    journal.pending(RecordKey(table: table, id: $0.id)) == nil
                }.map(\.fileName))
        }
        for entry in unlisted {
            let pending = journal.pending(RecordKey(table: table, id: entry.id))?.kind
            let kind: LocalChange.Kind
            switch FileChangeRule.decideMissing(pending: pending, inHead: inHead.map { $0.contains(entry.fileName) }) {
            case .covered: continue
            case .deleted: kind = .deleted
            case .removedByGit: kind = .removedByGit
            }
            scan.changes.append(
                LocalChange(
                    kind: kind, table: table, id: entry.id, fileName: entry.fileName, baseVersion: entry.version))
        }
    }

    /// The pending inserts and updates whose file is neither listed nor indexed, found deleted. Returns the names of
    /// the files known to be gone: these and the unlisted entries'.
    private func findPendingWithoutFile(
        _ joined: Join, table: String, journal: Journal, into scan: inout LocalScan
    ) throws -> Set<String> {
        var known = Set(joined.unlisted.map(\.fileName))
        for operation in journal.operations(inTable: table) where operation.kind != .delete {
            let fileName = RecordFileName.fileName(for: operation.id)
            guard !known.contains(fileName), !Self.isListed(fileName, in: joined.listed, of: joined.listing),
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
        _ joined: Join, git: GitBaseline, known: Set<String>, table: String, journal: Journal,
        into scan: inout LocalScan
    ) throws {
        guard let committed = try git.filesBeyondIndex(table: table, indexIsEmpty: joined.indexIsEmpty) else {
            return
        }
        var missing: [(name: String, blob: String)] = []
        for file in committed where RecordFileName.looksLikeRecordFile(file.name) && !known.contains(file.name) {
            guard let id = RecordFileName.id(forFileName: file.name),
                journal.pending(RecordKey(table: table, id: id)) == nil,
                !Self.isListed(file.name, in: joined.listed, of: joined.listing),
                try joined.index.entry(named: file.name) == nil
            else { continue }
            missing.append(file)
        }
        let versions = try git.versions(ofBlobs: missing.map(\.blob))
        for file in missing {
            // A file without a version was never on the server: nothing to delete there.
            guard let version = versions[file.blob], let id = RecordFileName.id(forFileName: file.name) else {
                continue
            }
            scan.changes.append(
                LocalChange(kind: .missing, table: table, id: id, fileName: file.name, baseVersion: version))
        }
        if let tree = git.trees[table] { scan.reconciledTrees[table] = tree }
    }

    /// `true` when `name` is among the `listed` files (positions in `listing`, sorted by name).
    private static func isListed(_ name: String, in listed: [Int], of listing: DirectoryListing) -> Bool {
        var name = name
        return name.withUTF8 { name in
            listing.withNames { names in
                let found = partitionPoint(listed.count) { StatIndexLine.compare(names[listed[$0]], name) < 0 }
                return found < listed.count && StatIndexLine.compare(names[listed[found]], name) == 0
            }
        }
    }

    /// A listed record file whose `stat` differs from its index entry (or that has none).
    private struct ChangedFile: Sendable {
        var name: String
        var relativePath: String
        var status: FileSystem.Status
        var entry: StatIndex.Entry?
    }

    private enum Examined: Sendable {
        /// Its bytes are the indexed ones after all (touched, not edited).
        case asIndexed
        case broken(RecordFileProblem)
        /// Read and valid, with the SHA-256 of its bytes and what the rule needs of it.
        case read(RecordFile.Loaded, hash: String, FileChangeRule.File)
    }

    /// Reads one changed file and decides what it is. Touches nothing shared, so files are examined in parallel.
    private func examine(_ file: ChangedFile, in directory: String) throws -> Examined {
        let bytes = try FileSystem.readFile(directory + "/" + file.name)
        let hash = SHA256.hexDigest(of: bytes)
        if let entry = file.entry, hash == entry.contentHash { return .asIndexed }
        switch RecordFile.check(bytes: bytes, fileName: file.name, relativePath: file.relativePath) {
        case .success(let loaded):
            let facts = FileChangeRule.File(
                version: loaded.record[SystemProperty.version]?.stringValue,
                carriesServerVersion: ServerRecord.isServerCopy(loaded.record),
                markIntact: SyncedMark.isIntact(loaded.record, bytes: bytes))
            return .read(loaded, hash: hash, facts)
        case .failure(let problem): return .broken(problem)
        }
    }
}
