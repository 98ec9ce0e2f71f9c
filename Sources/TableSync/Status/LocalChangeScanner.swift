import SyncProtocol

/// A change a person made to a record file that the journal does not hold yet.
public struct LocalChange: Sendable, Equatable {
    /// What happened to the file.
    public enum Kind: String, Sendable {
        case created, modified, deleted
        /// A file that carries the server's system properties (`version`, `updatedAt`) that this store never
        /// synced at that version: a fresh clone, a restore or a lost `.tablesync/` (no record of the file), or a
        /// git merge, checkout, rebase or revert (another server copy than the one synced). Not an edit until
        /// compared with the server, which the next push does before it sends anything.
        case uncompared
    }

    /// Whether the file was created, modified or deleted.
    public var kind: Kind
    /// The table of the record.
    public var table: String
    /// The record's id (from the file name).
    public var id: String
    /// The file name under `tables/<table>/`.
    public var fileName: String
    /// The server version the change was made on (from the index), for modified and deleted records; for an
    /// uncompared one, the version this store last synced, if any.
    public var baseVersion: String?

    /// The record this change is about.
    public var key: RecordKey { RecordKey(table: table, id: id) }
}

/// What a scan of the record files found.
public struct LocalScan: Sendable, Equatable {
    /// Changes made by hand that are not in the journal yet, by table and file name.
    public var changes: [LocalChange] = []
    /// Files that cannot be used, with the reason; they are skipped and nothing else is held back.
    public var problems: [RecordFileProblem] = []
    /// How many files were read and hashed because their `stat` changed (the rest cost one `stat` each).
    public var filesHashed = 0
    /// How many record files were looked at.
    public var filesSeen = 0

    /// The files not yet compared with the server (``LocalChange/Kind/uncompared``).
    public var uncompared: [LocalChange] { changes.filter { $0.kind == .uncompared } }
}

/// Finds hand edits: compares each table directory with its ``StatIndex`` and the journal, reading only the
/// files whose `stat` changed. Read-only; ``HandEditRecorder`` turns the result into journal operations.
struct LocalChangeScanner {
    let layout: StoreLayout

    func scan(tables: [String], journal: Journal) throws -> LocalScan {
        var reads = ReadRecordFiles(limit: 0)
        return try scan(tables: tables, journal: journal, keeping: &reads)
    }

    /// Scans as ``scan(tables:journal:)`` does, and keeps in `reads` (up to its limit) the files of the changes
    /// found, as read.
    func scan(tables: [String], journal: Journal, keeping reads: inout ReadRecordFiles) throws -> LocalScan {
        var scan = LocalScan()
        for table in tables {
            try scanTable(table, journal: journal, into: &scan, keeping: &reads)
        }
        return scan
    }

    private func scanTable(_ table: String, journal: Journal, into scan: inout LocalScan, keeping reads: inout ReadRecordFiles) throws {
        let directory = layout.tableDirectory(table)
        // Before the listing's `stat`s: a file changed after them gets a later time (see ``SentFile``).
        let clock = FileSystem.timestampClockNanoseconds()
        // The listing is sorted and walked beside the index's lines in the same order, the index read from disk
        // as the walk goes, never held whole; the files' `stat`s are taken on the other cores as the walk goes.
        // Names stay bytes of the listing; a String is made only for a file that is reported or read.
        let listing = try DirectoryListing(directory).sorted()
        let index = try StatIndex.load(layout: layout, table: table)
        let firstProblem = scan.problems.count
        func relativePath(_ name: String) -> String { "tables/\(table)/\(name)" }
        // Files whose `stat` changed, to read; checked on every core at once (reading, hashing and parsing
        // 10,000 hand-edited files is most of a big push's scan).
        var changed: [ChangedFile] = []
        // Entries whose file is not listed: deleted by hand, unless the journal says otherwise.
        var unlisted: [StatIndex.Entry] = []
        // The record files listed, as positions in the listing, in name order.
        var listed: [Int] = []
        listed.reserveCapacity(listing.count)
        var lines = try index.sortedLines()
        var more = try lines.step()
        try listing.withNames { names in
            try listing.forEachStatus { position, status in
                guard let status else { return }
                let name = names[position]
                guard RecordFileName.looksLikeRecordFile(name) else {
                    if !RecordFileName.isHidden(name) {
                        scan.problems.append(RecordFileProblem(path: relativePath(listing.name(at: position)),
                                                               reason: "not a record file (record files are named <id>.json); it is ignored"))
                    }
                    return
                }
                guard status.isRegularFile else {
                    scan.problems.append(RecordFileProblem(path: relativePath(listing.name(at: position)), reason: "not a regular file; it is ignored"))
                    return
                }
                listed.append(position)
                var order = 1
                while more {
                    order = lines.compareName(to: name)
                    guard order < 0 else { break }
                    if let entry = try lines.item().entry { unlisted.append(entry) }
                    more = try lines.step()
                }
                var indexed: StatIndex.Entry?
                if more && order == 0 {
                    // Most files of a scan end here, matched without a String made or a field parsed but the four compared.
                    if lines.vouches(for: status) {
                        more = try lines.step()
                        return
                    }
                    indexed = try lines.item().entry
                    more = try lines.step()
                }
                let fileName = listing.name(at: position)
                changed.append(ChangedFile(name: fileName, relativePath: relativePath(fileName), status: status, entry: indexed))
            }
        }
        scan.filesSeen += listed.count
        while more {
            if let entry = try lines.item().entry { unlisted.append(entry) }
            more = try lines.step()
        }
        scan.filesHashed += changed.count
        let examined = concurrentMap(changed) { file in Result { try examine(file, in: directory) } }
        for (file, result) in zip(changed, examined) {
            let loaded: RecordFile.Loaded
            let hash: String?
            switch try result.get() {
            case .asIndexed: continue
            case .broken(let problem):
                scan.problems.append(problem)
                continue
            case .edited(let value, let contentHash):
                (loaded, hash) = (value, contentHash)
            }
            let key = RecordKey(table: table, id: loaded.id)
            switch journal.pending(key)?.kind {
            case .insert?, .update?:
                continue
            case .delete?:
                scan.problems.append(RecordFileProblem(path: file.relativePath,
                    reason: "the record's delete is pending, so the file cannot be re-created yet; push first, or remove the file"))
            case nil:
                if Self.needsComparison(loaded.record, entry: file.entry) {
                    scan.changes.append(LocalChange(kind: .uncompared, table: table, id: loaded.id, fileName: file.name,
                                                    baseVersion: file.entry?.version))
                    continue
                }
                scan.changes.append(LocalChange(kind: file.entry == nil ? .created : .modified, table: table, id: loaded.id,
                                                fileName: file.name, baseVersion: file.entry?.version))
                reads.keep(ReadRecordFile(loaded: loaded, hash: hash, status: file.status, clock: clock), for: key)
            }
        }
        // A file is named after its id (RecordFile.check), so a listed name stands for its record.
        for entry in unlisted {
            let key = RecordKey(table: table, id: entry.id)
            guard journal.pending(key)?.kind != .delete else { continue }
            scan.changes.append(LocalChange(kind: .deleted, table: table, id: entry.id, fileName: entry.fileName,
                                            baseVersion: entry.version))
        }
        for operation in journal.operations(inTable: table) where operation.kind != .delete {
            let fileName = RecordFileName.fileName(for: operation.id)
            guard !Self.isListed(fileName, in: listed, of: listing), try index.entry(named: fileName) == nil else { continue }
            scan.changes.append(LocalChange(kind: .deleted, table: table, id: operation.id, fileName: fileName,
                                            baseVersion: operation.baseVersion))
        }
        scan.problems[firstProblem...].sort { $0.path < $1.path }
        scan.changes.sort { ($0.table, $0.fileName) < ($1.table, $1.fileName) }
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

    /// Whether a changed file must be compared with the server before it counts as an edit: it carries the
    /// server's system properties, and either this store never synced it (no index entry: a fresh clone, a
    /// restore, a lost cache) or its `version` is not the one this store synced (git put another server copy
    /// there: a merge, checkout, rebase or revert).
    static func needsComparison(_ record: [String: JSONValue], entry: StatIndex.Entry?) -> Bool {
        guard ServerRecord.isServerCopy(record) else { return false }
        guard let entry else { return true }
        return record[SystemProperty.version]?.stringValue != entry.version
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
        /// Read and valid; `hash` when it has an index entry to compare with.
        case edited(RecordFile.Loaded, hash: String?)
    }

    /// Reads one changed file and decides what it is. Touches nothing shared, so files are examined in parallel.
    private func examine(_ file: ChangedFile, in directory: String) throws -> Examined {
        let bytes = try FileSystem.readFile(directory + "/" + file.name)
        let hash = file.entry.map { _ in SHA256.hexDigest(of: bytes) }
        if let entry = file.entry, hash == entry.contentHash { return .asIndexed }
        switch RecordFile.check(bytes: bytes, fileName: file.name, relativePath: file.relativePath) {
        case .success(let loaded): return .edited(loaded, hash: hash)
        case .failure(let problem): return .broken(problem)
        }
    }
}
