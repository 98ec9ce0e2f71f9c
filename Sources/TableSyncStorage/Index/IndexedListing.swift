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
    /// Listed record files the index has no entry for and git's index vouches for (``init(layout:table:vouching:)``):
    /// not read, their entries made when asked.
    package private(set) var vouched: VouchedFiles?
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
        // The directory is listed on another core while the indexes are read: in a clone, git's index is about as
        // long to read as the listing.
        let (listing, indexes) = try concurrently({ try DirectoryListing(directory).sorted() }) {
            let index = try StatIndex.load(layout: layout, table: table)
            let walk = try IndexWalk(index.sortedLines())
            return (index: index, walk: walk, gitIndex: walk.indexIsEmpty ? try vouching() : nil)
        }
        source = .directory(listing)
        index = indexes.index
        listed.reserveCapacity(listing.count)
        var walk = indexes.walk
        indexIsEmpty = walk.indexIsEmpty
        gitIndex = indexes.gitIndex
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
        var gitPosition = 0
        var vouched = gitIndex.map { VouchedFiles(listing: listing, gitIndex: $0) }
        defer { self.vouched = vouched }
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
                if indexed == nil, let gitIndex, RecordFileName.spellsAnID(name),
                    let entry = gitIndex.vouchedEntry(for: name, status: status, searchingFrom: &gitPosition)
                {
                    vouched?.append(VouchedFiles.File(position: position, gitPosition: entry, status: status))
                    return
                }
                changed.append(
                    ChangedFile(
                        name: listing.name(at: position), relativePath: relativePath(position), status: status,
                        entry: indexed))
            }
        }
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
        var hint = 0
        return try isListed(name, hint: &hint)
    }

    /// ``isListed(_:)-(UnsafeBufferPointer<UInt8>)`` for names asked in name order, as git's index and trees hold
    /// them: the record file where the last name was found (`hint`, 0 at first) and the one after it are tried
    /// before a search, so that a walk of a whole table's names costs a comparison or two each. A name out of order
    /// is still answered right, by the search.
    package func isListed(_ name: UnsafeBufferPointer<UInt8>, hint: inout Int) throws -> Bool {
        guard case .directory(let listing) = source else { return try isListed(String(decoding: name, as: UTF8.self)) }
        return listing.withNames { names in
            for candidate in hint..<min(hint + 2, listed.count)
            where StatIndexLine.compare(names[listed[candidate]], name) == 0 {
                hint = candidate
                return true
            }
            let found = partitionPoint(listed.count) { StatIndexLine.compare(names[listed[$0]], name) < 0 }
            hint = min(found, max(listed.count - 1, 0))
            return found < listed.count && StatIndexLine.compare(names[listed[found]], name) == 0
        }
    }
}
