#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What TableSync last knew about each record file of a table: its `stat` fields, content hash, id and server
/// version, as last synced (written by pull, by push write-back, or by a person settling a conflict).
///
/// A file whose `stat` fields match its entry is unchanged without being read, as in git's index; a file whose
/// `stat` changed is hashed, and only a different hash makes it a change. An entry whose file was modified no
/// earlier than the index file holding it was written is "racily clean" (the file could have changed again
/// within the file system's timestamp granularity): it is handed out with its `stat` unknown, so the file is
/// always hashed (``Entry/checked(racyFrom:)``).
///
/// On disk, under `.tablesync/index/`, the index is kept so that memory does not grow with the table:
/// - the **log** `<table>.index`: a header line (`tablesync-index 3 <sequence>`) and one line per entry or removal
///   (``StatIndexLine``), appended and synced as records are synced; its lines are also held in memory (the
///   overlay), so it is kept short: at ``flushLines`` lines it is flushed, and a call with more lines than that (a
///   whole table indexed at once) writes them as a run of their own;
/// - **runs** `<table>.<first>-<last>.run` (``IndexRun``): sorted, immutable files read by `pread`. A flush writes
///   the overlay as a new run (sequence one past the last), then rewrites the log with that sequence in its
///   header; runs then merge, newest first, so that each is at least as big as the newer ones together
///   (``IndexRunPlan``), and a merge reaching the oldest run drops removals.
///
/// Crash safety: every file is either appended and synced (the log) or written whole through a temporary file
/// and renamed (runs, a rewritten log). Dying between a flush's run and its log rewrite leaves a log whose
/// sequence is below the newest run's: its lines are all in that run, and it is ignored. Dying after a merge's
/// run is renamed but before its inputs are removed leaves runs whose sequences lie within the merged one's:
/// they are ignored and removed. A log whose last line was torn keeps its whole lines (the synced write that tore
/// it is replayed from `.tablesync/intent`, see ``SyncedRecordWriter``). Anything else this version would not
/// have written (a damaged header or line, overlapping runs) drops the whole index: it is a cache, and rebuilding
/// it costs reading the files.
package struct StatIndex: Sendable {
    package struct Entry: Sendable, Equatable {
        package var fileName: String
        package var id: String
        var size: Int64
        var modifiedNanoseconds: Int64
        var changedNanoseconds: Int64
        var inode: UInt64
        /// The content hash of the file's bytes (``ContentHash``: git's blob id of them).
        package var contentHash: String
        /// The record's server version when it was synced; `nil` when it had none, or when it was not read
        /// (``versionIsInBlob``).
        package var version: String?
        /// Whether the entry was made without reading its file, because git's index vouched for the file's bytes
        /// (``GitVouchedFiles``): its version is the one the blob ``contentHash`` names holds, read from git by the
        /// few that need it.
        package var versionIsInBlob = false

        /// The size of an entry whose `stat` is not known: it matches no file, so the file is hashed.
        static let unknownSize: Int64 = -1

        /// The content hash of an entry whose file a person changed while the push that learned its version was
        /// in flight: the server has the entry's version, which holds the content sent, and the file holds an edit
        /// made on that content though it still names the version before. No file hashes to it.
        static let editedWhileSent = "edited-while-sent"

        /// Whether the file holds an edit made on the content of the entry's version (``editedWhileSent``).
        package var isEditedWhileSent: Bool { contentHash == Self.editedWhileSent }

        /// `true` when the file's `stat` fields are the entry's: the file is as indexed without being read.
        func matches(_ status: FileSystem.Status) -> Bool {
            Self.stat(
                status, matchesSize: size, modified: modifiedNanoseconds, changed: changedNanoseconds, inode: inode)
        }

        /// The rule of ``matches(_:)``, for `stat` fields read from an index line without making an entry.
        static func stat(
            _ status: FileSystem.Status, matchesSize size: Int64, modified: Int64, changed: Int64, inode: UInt64
        ) -> Bool {
            status.size == size && status.modifiedNanoseconds == modified && status.changedNanoseconds == changed
                && status.inode == inode
        }

        /// `true` when a file modified at `modified` is racily clean in an index file last written at `racyFrom`: it
        /// could have changed again within the same timestamp tick.
        static func isRacilyClean(modified: Int64, racyFrom: Int64) -> Bool { modified >= racyFrom }

        /// The entry as it may be trusted when the index file holding it was last written at `racyFrom`: itself,
        /// or, when it is racily clean there, a copy with its `stat` unknown.
        func checked(racyFrom: Int64) -> Entry {
            guard Self.isRacilyClean(modified: modifiedNanoseconds, racyFrom: racyFrom) else { return self }
            var unknown = self
            unknown.size = Self.unknownSize
            return unknown
        }
    }

    /// The log's header before its sequence. Logs and runs of earlier formats (`tablesync-index 1` and `2`, whose
    /// content hashes were SHA-256 digests) are dropped, as a damaged index is: rebuilt by the next scan.
    static let logHeader = "tablesync-index 3"

    /// Log lines at which the log is flushed into a run: what the index holds in memory at most (about 400 bytes
    /// a line), besides each run's fences and filter (about 3 bytes per line).
    var flushLines = Self.configuredFlushLines

    /// 8,192; debug builds take `TABLESYNC_INDEX_FLUSH_LINES` instead when set, so that the crash and disk-fault
    /// suites, which run `tablesync` on small tables, flush and merge runs every few records.
    static let configuredFlushLines: Int = {
        #if DEBUG
        if let value = getenv("TABLESYNC_INDEX_FLUSH_LINES").flatMap({ Int(String(cString: $0)) }), value > 0 {
            return value
        }
        #endif
        return 8_192
    }()

    /// The runs, oldest first.
    private(set) var runs: [IndexRun] = []
    /// The log's lines by file name (`nil` for a removal): newer than every run.
    private var overlay: [String: Entry?] = [:]
    /// Lines in the log file (it may repeat a name); 0 when there is no log file yet.
    private(set) var logLines = 0
    /// The log file's modification time when it was read; its entries not older are racily clean.
    private var logModifiedNanoseconds: Int64 = .max
    /// The log cannot be appended to: it must be written whole (it was flushed, is stale, torn or dropped).
    private var logNeedsRewrite = false
    /// The highest run sequence on disk, live or not; the next run takes the one after.
    private var lastSequence = 0
    /// Run files that no longer hold the index, removed by the next write.
    private var leftovers: [String] = []

    /// The entry of the file `name`, checked for being racily clean; `nil` when the index has none.
    package func entry(named name: String) throws -> Entry? {
        if let change = overlay[name] { return change?.checked(racyFrom: logModifiedNanoseconds) }
        for run in runs.reversed() {
            if let item = try run.item(named: name) { return item.entry?.checked(racyFrom: run.modifiedNanoseconds) }
        }
        return nil
    }

    /// The entry first in name order; `nil` when the index has none.
    package func firstEntry() throws -> Entry? {
        var lines = try sortedLines()
        while try lines.step() {
            if let entry = try lines.item().entry { return entry }
        }
        return nil
    }

    /// The id of the tree git would commit for the table's directory if each file held the bytes its entry names
    /// (``GitTree``, mode 100644): what the store records as synced (``SyncedTrees``). `nil` when the index is empty
    /// or some entry is no copy of a server record: its hash is no blob id (``Entry/editedWhileSent``) or it names
    /// no version.
    package func syncedTreeID() throws -> String? {
        var lines = try sortedLines()
        var tree = GitTree()
        var isEmpty = true
        while try lines.step() {
            if lines.isRemoval { continue }
            // Read on the line's bytes: this runs over every entry of a table at the end of a sync.
            let added = lines.withLine { line -> Bool in
                guard let fields = StatIndexLine.treeFields(of: line), fields.namesVersion,
                    let blob = ContentHash.rawBytes(of: fields.hash)
                else { return false }
                tree.append(mode: GitTree.fileMode, name: fields.name, blob: blob)
                return true
            }
            guard added else { return nil }
            isEmpty = false
        }
        return isEmpty ? nil : tree.id
    }

    /// The entries of `first` and `second`, each in file-name order (``StatIndexLine/compare(_:_:)``), in that
    /// order: what ``record(_:removed:layout:table:)`` writes without sorting.
    package static func merged(_ first: [StatIndex.Entry], _ second: [StatIndex.Entry]) -> [StatIndex.Entry] {
        guard !first.isEmpty else { return second }
        var result: [StatIndex.Entry] = []
        result.reserveCapacity(first.count + second.count)
        var (i, j) = (0, 0)
        while i < first.count, j < second.count {
            if StatIndexLine.precedes(second[j].fileName, first[i].fileName) {
                result.append(second[j])
                j += 1
            } else {
                result.append(first[i])
                i += 1
            }
        }
        result += first[i...]
        result += second[j...]
        return result
    }

    /// Every line of the index in file-name order (``StatIndexLine/compare(_:_:)``), newest first for a name: the
    /// log's lines, then each run's, read from disk as the walk goes.
    func sortedLines() throws -> IndexItemMerge {
        let log = overlayLines(keepingRemovals: true, racyFrom: nil)
        return try IndexItemMerge(
            newestFirst: [.lines(log, modifiedNanoseconds: logModifiedNanoseconds)] + runs.reversed().map { .run($0) })
    }

    /// The log's lines held in memory, sorted by name, each ending with a newline; with `racyFrom`, entries racily
    /// clean against it are written with their `stat` unknown.
    private func overlayLines(keepingRemovals: Bool, racyFrom: Int64?) -> [UInt8] {
        var lines: [UInt8] = []
        // The names alone are sorted: moving whole entries about costs more than looking each up again.
        for name in overlay.keys.sorted(by: StatIndexLine.precedes) {
            guard let entry = overlay[name], entry != nil || keepingRemovals else { continue }
            StatIndexLine.encode(
                StatIndexLine.Item(fileName: name, entry: racyFrom.map { entry?.checked(racyFrom: $0) } ?? entry),
                to: &lines)
        }
        return lines
    }

    package static func load(layout: StoreLayout, table: String) throws -> StatIndex {
        var index = StatIndex()
        var runPaths: [ClosedRange<Int>: String] = [:]
        for name in try FileSystem.listNames(layout.indexDirectory) {
            if let sequences = IndexRun.sequences(ofFileName: name, table: table) {
                runPaths[sequences] = layout.indexDirectory + "/" + name
            }
        }
        index.lastSequence = runPaths.keys.map(\.upperBound).max() ?? 0
        guard let plan = IndexRunPlan.live(Array(runPaths.keys)) else { return index.dropped(runPaths) }
        // The plan names only runs of `runPaths`.
        index.leftovers = plan.replaced.compactMap { runPaths[$0] }
        for sequences in plan.live {
            guard let path = runPaths[sequences], let run = try IndexRun.open(path: path, sequences: sequences) else {
                return index.dropped(runPaths)
            }
            index.runs.append(run)
        }

        let path = layout.indexFile(table)
        let bytes: [UInt8]
        do {
            index.logModifiedNanoseconds = try FileSystem.status(path)?.modifiedNanoseconds ?? .max
            bytes = try FileSystem.readFile(path)
        } catch let error as FileSystemError where error.isNotFound {
            return index
        }
        index.overlay.reserveCapacity(bytes.count / 160)
        var sequence: Int?
        var malformed = false
        let whole = bytes.withUnsafeBufferPointer { buffer in
            StatIndexLine.forEachLine(in: buffer) { line in
                guard !malformed else { return }
                guard sequence != nil else {
                    sequence = Self.sequence(ofHeader: String(decoding: line, as: UTF8.self))
                    malformed = sequence == nil
                    return
                }
                guard let item = StatIndexLine.parse(line) else {
                    malformed = true
                    return
                }
                index.overlay.updateValue(item.entry, forKey: item.fileName)
                index.logLines += 1
            }
        }
        guard let sequence, !malformed else { return index.dropped(runPaths) }
        if sequence < (index.runs.last?.sequences.upperBound ?? 0) {
            // Flushed into the newest run before the process died, but not rewritten.
            index.overlay = [:]
            index.logLines = 0
            index.logNeedsRewrite = true
        } else if whole < bytes.count {
            index.logNeedsRewrite = true
        }
        return index
    }

    /// The sequence in a log's header line: the newest run flushed before the log's first line; `nil` when it is
    /// not a header of this format.
    static func sequence(ofHeader line: String) -> Int? {
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] + " " + parts[1] == logHeader, !parts[2].isEmpty,
            parts[2].allSatisfy({ ("0"..."9").contains($0) }),
            let sequence = Int(parts[2]), sequence >= 0
        else { return nil }
        return sequence
    }

    /// An empty index that replaces this one's files at its first write.
    private func dropped(_ runPaths: [ClosedRange<Int>: String]) -> StatIndex {
        var empty = StatIndex()
        empty.flushLines = flushLines
        empty.lastSequence = lastSequence
        empty.leftovers = Array(runPaths.values)
        empty.logNeedsRewrite = true
        return empty
    }

    /// Records new entries and removals durably: appended to the log (written whole when it must be), after
    /// flushing the log into a run when it is full.
    mutating func record(_ updated: [Entry], removed: [String], layout: StoreLayout, table: String) throws {
        guard !updated.isEmpty || !removed.isEmpty else { return }
        try FileSystem.createDirectory(layout.indexDirectory)
        for path in leftovers { try FileSystem.removeFile(path) }
        leftovers = []
        // More lines than a log holds (a clone's first sync indexing a whole table, an adoption, a replayed intent)
        // never pass through the log, so the overlay never outgrows its bound.
        guard updated.count + removed.count <= flushLines else {
            try recordAsRun(updated, removed: removed, layout: layout, table: table)
            return
        }
        let added = updated.count + removed.count
        // Flushed before the new lines are added, not after: the log's time is then that of an earlier write, so
        // fewer of the flushed entries are racily clean and written with their `stat` unknown.
        if logLines > 0, logLines + added > flushLines { try flush(layout: layout, table: table) }
        var lines: [UInt8] = []
        let rewrite = logNeedsRewrite || logLines == 0
        if rewrite {
            lines.append(contentsOf: "\(Self.logHeader) \(lastSequence)\n".utf8)
            for (name, entry) in overlay {
                StatIndexLine.encode(StatIndexLine.Item(fileName: name, entry: entry), to: &lines)
            }
        }
        for entry in updated {
            StatIndexLine.encode(StatIndexLine.Item(fileName: entry.fileName, entry: entry), to: &lines)
            overlay[entry.fileName] = entry
        }
        for name in removed {
            StatIndexLine.encode(StatIndexLine.Item(fileName: name, entry: nil), to: &lines)
            overlay.updateValue(nil, forKey: name)
        }
        if rewrite {
            var batch = DurableFileBatch()
            batch.write(lines, to: layout.indexFile(table))
            try batch.commit(temporaryDirectory: layout.temporaryDirectory)
            logLines = overlay.count
            logNeedsRewrite = false
        } else {
            try FileSystem.appendAndSync(layout.indexFile(table), lines)
            logLines += added
        }
    }

    /// Writes the overlay as the next run and empties it (the log is rewritten by the caller), then merges runs.
    private mutating func flush(layout: StoreLayout, table: String) throws {
        try writeOverlayAsRun(layout: layout, table: table)
        try mergeRuns(layout: layout, table: table)
    }

    /// Records `updated` and `removed` (removals winning, as in the log) as a run of their own, written once in name
    /// order (``sortedLines(_:removed:keepingRemovals:)``): the log's lines go into a run first, so that the new run
    /// is the newest, then runs merge as after a flush. Entries modified from the start of the call on are written
    /// with their `stat` unknown, as a flush writes the log's racily clean ones.
    private mutating func recordAsRun(
        _ updated: [Entry], removed: [String], layout: StoreLayout, table: String
    ) throws {
        let racyFrom = FileSystem.timestampClockNanoseconds()
        if !overlay.isEmpty { try writeOverlayAsRun(layout: layout, table: table) }
        // `nil`: the entries are in order already, as a scan finds them, and are written from where they are.
        let sorted = Self.sortedLines(updated, removed: removed, keepingRemovals: !runs.isEmpty)
        let sequence = lastSequence + 1
        var line: [UInt8] = []
        let run = try IndexRun.write(
            table: table, sequences: sequence...sequence, layout: layout, capacity: sorted?.count ?? updated.count
        ) { emit in
            func write(_ fileName: String, _ entry: Entry?) throws {
                line.removeAll(keepingCapacity: true)
                StatIndexLine.encode(
                    StatIndexLine.Item(fileName: fileName, entry: entry?.checked(racyFrom: racyFrom)), to: &line)
                // Without its newline, as a run's lines are handed on.
                try line.withUnsafeBufferPointer { try emit(UnsafeBufferPointer(rebasing: $0.dropLast())) }
            }
            if let sorted {
                for item in sorted { try write(item.fileName, item.entry) }
            } else {
                for entry in updated { try write(entry.fileName, entry) }
            }
        }
        lastSequence = sequence
        runs.append(run)
        // The log's lines, if it had any, are in the run before: its header's sequence now says so at its next write.
        overlay = [:]
        logLines = 0
        logNeedsRewrite = true
        try mergeRuns(layout: layout, table: table)
    }

    /// The lines of `updated` and `removed` in name order, one per name, a removal winning over an entry;
    /// removals only when `keepingRemovals` (older runs hold what they remove). `nil` when `updated` is that
    /// already (in strict name order, with no removal), as a scan finds a table's files: no copy is made of it.
    static func sortedLines(
        _ updated: [Entry], removed: [String], keepingRemovals: Bool
    ) -> [StatIndexLine.Item]? {
        if removed.isEmpty,
            zip(updated, updated.dropFirst()).allSatisfy({ StatIndexLine.precedes($0.fileName, $1.fileName) })
        {
            return nil
        }
        var byName: [String: Entry?] = Dictionary(minimumCapacity: updated.count + removed.count)
        for entry in updated { byName[entry.fileName] = entry }
        for name in removed { byName.updateValue(nil, forKey: name) }
        return byName.keys.sorted(by: StatIndexLine.precedes).compactMap { name in
            guard let entry = byName[name], entry != nil || keepingRemovals else { return nil }
            return StatIndexLine.Item(fileName: name, entry: entry)
        }
    }

    /// Writes the overlay as the next run and empties it; the log is left to be rewritten.
    private mutating func writeOverlayAsRun(layout: StoreLayout, table: String) throws {
        let logTime = try FileSystem.status(layout.indexFile(table))?.modifiedNanoseconds ?? .max
        // Removals matter only against older runs.
        var lines = try IndexLineCursor(
            lines: overlayLines(keepingRemovals: !runs.isEmpty, racyFrom: logTime), racyFrom: .max)
        let sequence = lastSequence + 1
        let run = try IndexRun.write(
            table: table, sequences: sequence...sequence, layout: layout, capacity: overlay.count
        ) { emit in
            while !lines.isAtEnd {
                try lines.withLine(emit)
                try lines.advance()
            }
        }
        lastSequence = sequence
        runs.append(run)
        // Room for a whole log from the start: growing a dictionary copies it, with old and new storage both alive.
        overlay = Dictionary(minimumCapacity: flushLines)
        logLines = 0
        logNeedsRewrite = true
    }

    /// Merges the newest runs while ``IndexRunPlan/mergeCount(itemCounts:)`` says so; the merged run is in place
    /// before its inputs are removed.
    private mutating func mergeRuns(layout: StoreLayout, table: String) throws {
        while case let count = IndexRunPlan.mergeCount(itemCounts: runs.map(\.itemCount)), count >= 2 {
            let merging = Array(runs.suffix(count))
            guard let oldest = merging.first, let newest = merging.last else { return }
            let keepRemovals = count < runs.count
            var merge = try IndexItemMerge(newestFirst: merging.reversed().map { .run($0) })
            let sequences = oldest.sequences.lowerBound...newest.sequences.upperBound
            // Lines are copied as they are: a run's entries were checked for being racily clean when it was flushed.
            let merged = try IndexRun.write(
                table: table, sequences: sequences, layout: layout,
                capacity: merging.reduce(0) { $0 + $1.itemCount }
            ) { emit in
                while try merge.step() {
                    if keepRemovals || !merge.isRemoval { try merge.withLine(emit) }
                }
            }
            runs.removeLast(count)
            runs.append(merged)
            for run in merging { try FileSystem.removeFile(run.path) }
        }
    }
}
