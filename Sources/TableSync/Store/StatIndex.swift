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

        /// `true` when the entry vouches for a file whose status is `status` without reading it: the `stat` fields
        /// match and the entry is older than the index file that was read (`indexModifiedNanoseconds`), so it is
        /// not racily clean.
        func vouches(for status: FileSystem.Status, indexModifiedNanoseconds: Int64) -> Bool {
            matches(status) && modifiedNanoseconds < indexModifiedNanoseconds
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
        entry.vouches(for: status, indexModifiedNanoseconds: loadedModifiedNanoseconds)
    }

    /// What the index says of the file `name` whose status is `status`: `nil` when it has no entry, else whether
    /// the entry vouches for the file (``isUnchanged(_:status:)``). Reads the entry in place: a scan asks this of
    /// every file, and copying each entry out (its strings retained and released) was most of the scan's own time.
    func isUnchanged(name: String, status: FileSystem.Status) -> Bool? {
        guard let position = entries.index(forKey: name) else { return nil }
        return entries.values[position].vouches(for: status, indexModifiedNanoseconds: loadedModifiedNanoseconds)
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
        index.entries.reserveCapacity(bytes.count / 128)
        // The index is a cache: an unreadable one is dropped and rebuilt, which only costs hashing.
        let parsed = bytes.withUnsafeBufferPointer { buffer in Self.parse(buffer, into: &index) }
        guard parsed else { return StatIndex() }
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

extension StatIndex {
    /// Parses the index file's bytes (header, then one line per entry or removal) into `index`; `false` when
    /// the file is not an index this version wrote. Works on bytes: a String is made only for the four text
    /// fields of an entry, never for a number, so a 100,000-line index loads in a few tens of milliseconds.
    fileprivate static func parse(_ bytes: UnsafeBufferPointer<UInt8>, into index: inout StatIndex) -> Bool {
        let newline = UInt8(ascii: "\n"), tab = UInt8(ascii: "\t")
        var lineStart = 0
        var isHeader = true
        var lineCount = 0
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != newline { lineEnd += 1 }
            defer { lineStart = lineEnd + 1 }
            if lineEnd == lineStart { continue }
            lineCount += 1
            let line = UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd])
            if isHeader {
                guard line.elementsEqual(header.utf8) else { return false }
                isHeader = false
                continue
            }
            if line.count >= 2, line[line.count - 1] == UInt8(ascii: "-"), line[line.count - 2] == tab {
                index.entries[String(decoding: UnsafeBufferPointer(rebasing: line[..<(line.count - 2)]), as: UTF8.self)] = nil
                continue
            }
            // Eight fields: name, id, size, mtime, ctime, inode, hash, version (the last may hold anything but a newline).
            var fields: [Range<Int>] = []
            fields.reserveCapacity(8)
            var fieldStart = 0
            for position in 0..<line.count where fields.count < 7 && line[position] == tab {
                fields.append(fieldStart..<position)
                fieldStart = position + 1
            }
            fields.append(fieldStart..<line.count)
            guard fields.count == 8,
                  let size: Int64 = decimal(line, fields[2]), let modified: Int64 = decimal(line, fields[3]),
                  let changed: Int64 = decimal(line, fields[4]), let inode: UInt64 = decimal(line, fields[5])
            else { return false }
            func text(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: line[range]), as: UTF8.self) }
            let fileName = text(fields[0])
            index.entries[fileName] = Entry(
                fileName: fileName, id: text(fields[1]), size: size, modifiedNanoseconds: modified, changedNanoseconds: changed,
                inode: inode, contentHash: text(fields[6]), version: fields[7].isEmpty ? nil : text(fields[7]))
        }
        index.lineCount = lineCount
        return !isHeader
    }

    /// The decimal number (an optional `-` for a signed type, then digits) in `range` of `line`; `nil` when it is
    /// not one or does not fit in `Number`.
    private static func decimal<Number: FixedWidthInteger>(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Number? {
        var position = range.lowerBound
        let negative = Number.isSigned && position < range.upperBound && line[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        guard position < range.upperBound else { return nil }
        var value: Number = 0
        while position < range.upperBound {
            let digit = line[position] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            // Negative numbers are built downwards, so the most negative value fits too.
            let (next, overflowB) = negative ? shifted.subtractingReportingOverflow(Number(digit))
                                             : shifted.addingReportingOverflow(Number(digit))
            guard !overflowA, !overflowB else { return nil }
            value = next
            position += 1
        }
        return value
    }
}
