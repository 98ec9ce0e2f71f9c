/// A table directory's listing joined with its ``StatIndex`` in one walk in name order: the record files whose
/// `stat` the index does not vouch for, the entries whose file is not listed, and the names that are no record
/// files. Where a scan for hand edits starts; it reads no record file.
///
/// A listing may also be limited to some names (``init(layout:table:names:)``): the files a watch's file events
/// named, the rest of the table taken to be as its index last saw it.
///
/// The listing is sorted and walked beside the index's lines in the same order, the index read from disk as the
/// walk goes, never held whole; the files' `stat`s are taken on the other cores as the walk goes. Names stay bytes
/// of the listing; a String is made only for a file that is reported or read.
package struct IndexedListing {
    /// A listed record file whose `stat` differs from its index entry (or that has none).
    package struct ChangedFile: Sendable {
        package var name: String
        /// `tables/<table>/<name>`, as messages name it.
        package var relativePath: String
        package var status: FileSystem.Status
        package var entry: StatIndex.Entry?
    }

    /// The table's index, as loaded for the walk.
    package let index: StatIndex
    /// The file-timestamp clock before the listing's `stat`s (see ``SentFile``).
    package let clock: Int64
    /// Files whose `stat` changed (or that have no entry), to read.
    package private(set) var changed: [ChangedFile] = []
    /// Entries whose file is not listed.
    package private(set) var unlisted: [StatIndex.Entry] = []
    /// Entries made without reading the file, for listed record files the index has no entry for and git's index
    /// vouches for (``init(layout:table:vouching:)``), in name order: their version is in their blob.
    package private(set) var vouched: [StatIndex.Entry] = []
    /// Git's index of the table, when the walk asked for it and it could vouch for files.
    package private(set) var gitIndex: GitIndexFile?
    /// Listed names that are not record files, or not regular files: ignored, and said so.
    package private(set) var problems: [RecordFileProblem] = []
    /// Listed files that editors and merge tools left (``LeftoverFileName``), as `tables/<table>/<name>`: no
    /// records and no problems, ignored with a notice.
    package private(set) var leftovers: [String] = []
    /// Whether the index has no entry at all (a clone, a lost cache).
    package private(set) var indexIsEmpty = true
    /// What was listed.
    private enum Source {
        /// The whole directory.
        case directory(DirectoryListing)
        /// Some names of it (``init(layout:table:names:)``): the table's directory, the names given, and those of
        /// them that are record files.
        case names(directory: String, given: Set<String>, recordFiles: Set<String>)
    }

    private let source: Source
    /// Of a whole directory's listing, the record files, as positions in the listing, in name order.
    private var listed: [Int] = []

    /// How many record files are listed.
    package var listedCount: Int {
        switch source {
        case .directory: listed.count
        case .names(_, _, let recordFiles): recordFiles.count
        }
    }

    /// Lists `table`'s directory and walks it beside the table's index. When the index is empty (a clone, a lost
    /// cache), `vouching` is asked once for git's index of the table, and the files it vouches for are not read
    /// (``vouched``).
    package init(layout: StoreLayout, table: String, vouching: () throws -> GitIndexFile? = { nil }) throws {
        let directory = layout.tableDirectory(table)
        // Before the listing's `stat`s: a file changed after them gets a later time (see ``SentFile``).
        clock = FileSystem.timestampClockNanoseconds()
        let listing = try DirectoryListing(directory).sorted()
        source = .directory(listing)
        index = try StatIndex.load(layout: layout, table: table)
        listed.reserveCapacity(listing.count)
        var walk = try IndexWalk(index.sortedLines())
        indexIsEmpty = walk.indexIsEmpty
        gitIndex = indexIsEmpty ? try vouching() : nil
        try walkListing(table: table, beside: &walk, vouchedBy: gitIndex)
        unlisted = try walk.finish()
    }

    /// Joins only the files `names` of `table`'s directory with the table's index, each looked up alone: what a
    /// watch's file events named since its last scan. A name with no file is unlisted when the index has it; every
    /// other name of the directory counts as unchanged, and ``isListed(_:)`` answers for it from the disk.
    package init(layout: StoreLayout, table: String, names: Set<String>) throws {
        let directory = layout.tableDirectory(table)
        clock = FileSystem.timestampClockNanoseconds()
        index = try StatIndex.load(layout: layout, table: table)
        indexIsEmpty = try IndexWalk(index.sortedLines()).indexIsEmpty
        var recordFiles: Set<String> = []
        for name in names.sorted() {
            let relativePath = "tables/\(table)/\(name)"
            guard let status = try FileSystem.status(directory + "/" + name) else {
                if let entry = try index.entry(named: name) { unlisted.append(entry) }
                continue
            }
            // Hidden names are the store's own temporary files, as in the whole listing.
            if name.hasPrefix(".") { continue }
            if LeftoverFileName.isLeftover(name, besideRecordFile: { FileSystem.exists(directory + "/" + $0) }) {
                leftovers.append(relativePath)
                continue
            }
            guard RecordFileName.looksLikeRecordFile(name) else {
                problems.append(Self.notRecordFile(relativePath))
                continue
            }
            guard status.isRegularFile else {
                problems.append(Self.notRegularFile(relativePath))
                continue
            }
            recordFiles.insert(name)
            let entry = try index.entry(named: name)
            if let entry, entry.matches(status) { continue }
            changed.append(ChangedFile(name: name, relativePath: relativePath, status: status, entry: entry))
        }
        source = .names(directory: directory, given: names, recordFiles: recordFiles)
    }

    private static func notRecordFile(_ relativePath: String) -> RecordFileProblem {
        RecordFileProblem(
            path: relativePath, reason: "not a record file (record files are named <id>.json); it is ignored")
    }

    private static func notRegularFile(_ relativePath: String) -> RecordFileProblem {
        RecordFileProblem(path: relativePath, reason: "not a regular file; it is ignored")
    }

    private mutating func walkListing(
        table: String, beside walk: inout IndexWalk, vouchedBy gitIndex: GitIndexFile?
    ) throws {
        guard case .directory(let listing) = source else { return }
        func relativePath(_ position: Int) -> String { "tables/\(table)/\(listing.name(at: position))" }
        try listing.withNames { names in
            try listing.forEachStatus { position, status in
                guard let status else { return }
                let name = names[position]
                guard RecordFileName.looksLikeRecordFile(name) else {
                    if !RecordFileName.isHidden(name) {
                        if LeftoverFileName.isLeftover(listing.name(at: position)) {
                            leftovers.append(relativePath(position))
                            return
                        }
                        problems.append(Self.notRecordFile(relativePath(position)))
                    }
                    return
                }
                if LeftoverFileName.mayBeMergeToolCopy(name),
                    let original = LeftoverFileName.mergeToolOriginal(of: listing.name(at: position)),
                    isListedSoFar(original, names: names)
                {
                    leftovers.append(relativePath(position))
                    return
                }
                guard status.isRegularFile else {
                    problems.append(Self.notRegularFile(relativePath(position)))
                    return
                }
                listed.append(position)
                guard case .changed(let indexed) = try walk.match(name, status: status) else { return }
                if indexed == nil, let entry = gitIndex.flatMap({ Self.vouchedEntry(name, status: status, by: $0) }) {
                    vouched.append(entry)
                    return
                }
                changed.append(
                    ChangedFile(
                        name: listing.name(at: position), relativePath: relativePath(position), status: status,
                        entry: indexed))
            }
        }
    }

    /// The entry of the record file `name`, whose `stat` is `status`, when `gitIndex` vouches for its bytes and its
    /// name spells out its id: made without reading it, its version left in its blob.
    private static func vouchedEntry(
        _ name: UnsafeBufferPointer<UInt8>, status: FileSystem.Status, by gitIndex: GitIndexFile
    ) -> StatIndex.Entry? {
        guard let hash = gitIndex.vouchedHash(for: name, status: status) else { return nil }
        let fileName = String(decoding: name, as: UTF8.self)
        guard let id = RecordFileName.id(forFileName: fileName) else { return nil }
        return StatIndex.Entry(
            fileName: fileName, id: id, status: status, contentHash: hash, version: nil, versionIsInBlob: true)
    }

    /// `true` when `name` is among the record files the walk has listed so far (a name that sorts before the one
    /// at hand).
    private func isListedSoFar(_ name: String, names: DirectoryListing.Names) -> Bool {
        var name = name
        return name.withUTF8 { isListedSoFar($0, names: names) }
    }

    /// ``isListedSoFar(_:names:)-(String,_)`` for a name's UTF-8 bytes.
    private func isListedSoFar(_ name: UnsafeBufferPointer<UInt8>, names: DirectoryListing.Names) -> Bool {
        let found = partitionPoint(listed.count) { StatIndexLine.compare(names[listed[$0]], name) < 0 }
        return found < listed.count && StatIndexLine.compare(names[listed[found]], name) == 0
    }

    /// `true` when `name` is among the listed record files; for a listing limited to some names, a name it was not
    /// given is looked for on disk.
    /// - Throws: ``FileSystemError`` when that look fails for another reason than the file's absence: a file that
    ///   cannot be seen is never taken for one deleted.
    package func isListed(_ name: String) throws -> Bool {
        switch source {
        case .directory(let listing):
            return listing.withNames { isListedSoFar(name, names: $0) }
        case .names(let directory, let given, let recordFiles):
            if given.contains(name) { return recordFiles.contains(name) }
            return try FileSystem.status(directory + "/" + name)?.isRegularFile ?? false
        }
    }

    /// ``isListed(_:)-(String)`` for a name's UTF-8 bytes: no String is made for a whole listing's name.
    package func isListed(_ name: UnsafeBufferPointer<UInt8>) throws -> Bool {
        switch source {
        case .directory(let listing): return listing.withNames { isListedSoFar(name, names: $0) }
        case .names: return try isListed(String(decoding: name, as: UTF8.self))
        }
    }
}
