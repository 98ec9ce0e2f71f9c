/// What TableSync last knew about each record file of a table: its `stat` fields, content hash, id and
/// server version. Kept in `.tablesync/index/<table>.index`, one tab-separated line per file, appended to as
/// records are synced (a later line for a file replaces an earlier one; a line with only a name and `-`
/// removes it) and compacted when more than half of it is outdated.
///
/// The index records the state of a file as last synced (written by pull, by push write-back, or by a person
/// settling a conflict). A file whose `stat` fields match its entry is unchanged without being read, as in
/// git's index; a file whose `stat` changed is hashed, and only a different hash makes it a change. Entries
/// whose modification time is not older than the index file itself are "racily clean" (the file could have
/// changed within the file system's timestamp granularity) and are always hashed.
struct StatIndex: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var fileName: String
        var id: String
        var size: Int64
        var modifiedNanoseconds: Int64
        var changedNanoseconds: Int64
        var inode: UInt64
        /// SHA-256 of the file's bytes, hex.
        var contentHash: String
        /// The record's server version when it was synced.
        var version: String?

        func matches(_ status: FileSystem.Status) -> Bool {
            status.size == size && status.modifiedNanoseconds == modifiedNanoseconds
                && status.changedNanoseconds == changedNanoseconds && status.inode == inode
        }
    }

    static let header = "tablesync-index 1"

    /// Entries by file name.
    var entries: [String: Entry] = [:]
    /// Lines in the file, live or outdated, to decide when to compact.
    var lineCount = 0
    /// The modification time of the index file when it was read; entries not older than it are racily clean.
    var loadedModifiedNanoseconds: Int64 = .max

    /// `true` when `entry` can be trusted for a file whose status is `status` without reading the file.
    func isUnchanged(_ entry: Entry, status: FileSystem.Status) -> Bool {
        entry.matches(status) && entry.modifiedNanoseconds < loadedModifiedNanoseconds
    }

    static func load(layout: StoreLayout, table: String) throws -> StatIndex {
        let path = layout.indexFile(table)
        let bytes: [UInt8]
        let status: FileSystem.Status?
        do {
            status = try FileSystem.status(path)
            bytes = try FileSystem.readFile(path)
        } catch let error as FileSystemError where error.isNotFound {
            return StatIndex()
        }
        var index = StatIndex(entries: [:], loadedModifiedNanoseconds: status?.modifiedNanoseconds ?? .max)
        var lines = bytes.split(separator: UInt8(ascii: "\n"))
        index.lineCount = lines.count
        // The index is a cache: an unreadable one is dropped and rebuilt, which only costs hashing.
        guard let first = lines.first, String(decoding: first, as: UTF8.self) == header else { return StatIndex() }
        lines.removeFirst()
        index.entries.reserveCapacity(lines.count)
        for line in lines {
            if line.count >= 2, line.last == UInt8(ascii: "-"), line[line.endIndex - 2] == UInt8(ascii: "\t") {
                index.entries[String(decoding: line.dropLast(2), as: UTF8.self)] = nil
                continue
            }
            let fields = line.split(separator: UInt8(ascii: "\t"), maxSplits: 7, omittingEmptySubsequences: false)
            guard fields.count == 8,
                  let size = Int64(decimal: fields[2]), let modified = Int64(decimal: fields[3]),
                  let changed = Int64(decimal: fields[4]), let inode = UInt64(decimal: fields[5])
            else { return StatIndex() }
            let fileName = String(decoding: fields[0], as: UTF8.self)
            let version = String(decoding: fields[7], as: UTF8.self)
            index.entries[fileName] = Entry(
                fileName: fileName, id: String(decoding: fields[1], as: UTF8.self), size: size,
                modifiedNanoseconds: modified, changedNanoseconds: changed, inode: inode,
                contentHash: String(decoding: fields[6], as: UTF8.self), version: version.isEmpty ? nil : version)
        }
        return index
    }

    /// Records new entries and removals durably: appended to the index file, or the whole file rewritten
    /// when most of it would be outdated.
    mutating func record(_ updated: [Entry], removed: [String], layout: StoreLayout, table: String) throws {
        guard !updated.isEmpty || !removed.isEmpty else { return }
        for entry in updated { entries[entry.fileName] = entry }
        for name in removed { entries[name] = nil }
        let path = layout.indexFile(table)
        let appendedLines = updated.count + removed.count
        if lineCount == 0 || lineCount + appendedLines > 2 * entries.count + 1000 {
            var batch = DurableFileBatch()
            var bytes = Array((Self.header + "\n").utf8)
            bytes.reserveCapacity(entries.count * 160)
            for name in entries.keys.sorted() { Self.appendLine(entries[name]!, to: &bytes) }
            batch.write(bytes, to: path)
            try FileSystem.createDirectory(layout.indexDirectory)
            try batch.commit(temporaryDirectory: layout.temporaryDirectory)
            lineCount = entries.count
        } else {
            var bytes: [UInt8] = []
            for entry in updated { Self.appendLine(entry, to: &bytes) }
            for name in removed { bytes.append(contentsOf: "\(name)\t-\n".utf8) }
            try FileSystem.appendAndSync(path, bytes)
            lineCount += appendedLines
        }
    }

    private static func appendLine(_ entry: Entry, to bytes: inout [UInt8]) {
        let line = "\(entry.fileName)\t\(entry.id)\t\(entry.size)\t\(entry.modifiedNanoseconds)\t\(entry.changedNanoseconds)\t\(entry.inode)\t\(entry.contentHash)\t\(entry.version ?? "")\n"
        bytes.append(contentsOf: line.utf8)
    }
}

extension Int64 {
    init?(decimal bytes: ArraySlice<UInt8>) {
        guard let value = Int64(String(decoding: bytes, as: UTF8.self)) else { return nil }
        self = value
    }
}

extension UInt64 {
    init?(decimal bytes: ArraySlice<UInt8>) {
        guard let value = UInt64(String(decoding: bytes, as: UTF8.self)) else { return nil }
        self = value
    }
}
