#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One line of the stat index, as its log and its runs hold it: an entry's nine tab-separated fields (name, id,
/// size, modification time, change time, inode, content hash, where the version is, version), or a file name and
/// `-` for a removal. Where the version is: `v` when it is the last field (empty for none), `b` when it was not
/// read and is the one in the blob the content hash names (``StatIndex/Entry/versionIsInBlob``). The version is the
/// rest of the line, so it may hold anything but a newline; a file name never holds a tab (``RecordFileName``
/// spells it out).
enum StatIndexLine {
    /// What a line says about one file name.
    struct Item: Equatable, Sendable {
        var fileName: String
        /// The entry, or `nil` for a removal.
        var entry: StatIndex.Entry?
    }

    /// Appends the line of `item` (with its newline) to `bytes`.
    static func encode(_ item: Item, to bytes: inout [UInt8]) {
        guard let entry = item.entry else {
            bytes.append(contentsOf: item.fileName.utf8)
            bytes.append(contentsOf: "\t-\n".utf8)
            return
        }
        bytes.append(contentsOf: "\(entry.fileName)\t\(entry.id)\t\(entry.size)\t\(entry.modifiedNanoseconds)\t".utf8)
        bytes.append(contentsOf: "\(entry.changedNanoseconds)\t\(entry.inode)\t\(entry.contentHash)\t".utf8)
        bytes.append(contentsOf: entry.versionIsInBlob ? "b\t".utf8 : "v\t".utf8)
        bytes.append(contentsOf: (entry.version ?? "").utf8)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// The order of file names in the index: by their UTF-8 bytes. Every sort and search of the index and of the
    /// listing it is walked beside uses this one order.
    static func precedes(_ first: String, _ second: String) -> Bool {
        var first = first
        var second = second
        return first.withUTF8 { a in second.withUTF8 { b in compare(a, b) < 0 } }
    }

    /// Negative, zero or positive as `first` sorts before, with or after `second`, by bytes.
    static func compare(_ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(first.count, second.count)
        if common > 0, let a = first.baseAddress, let b = second.baseAddress {
            let order = memcmp(a, b, common)
            if order != 0 { return Int(order) }
        }
        return first.count - second.count
    }

    /// `true` when `line` is a removal (`name TAB -`).
    static func isRemoval(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        line.count >= 2 && line[line.count - 1] == UInt8(ascii: "-") && line[line.count - 2] == UInt8(ascii: "\t")
    }

    /// The `stat` fields of an entry's line (size, modification and change times, inode), read without making
    /// any String; `nil` for a removal or a line that is not an entry's.
    static func statFields(
        of line: UnsafeBufferPointer<UInt8>
    ) -> (size: Int64, modified: Int64, changed: Int64, inode: UInt64)? {
        // The tabs after the id, size, mtime, ctime and inode: no array, this runs once per file of a scan.
        var tabs = (0, 0, 0, 0, 0)
        var found = 0
        for position in 0..<line.count where line[position] == UInt8(ascii: "\t") {
            switch found {
            case 0: break
            case 1: tabs.0 = position
            case 2: tabs.1 = position
            case 3: tabs.2 = position
            case 4: tabs.3 = position
            default: tabs.4 = position
            }
            found += 1
            if found == 6 { break }
        }
        guard found == 6, let size: Int64 = decimal(line, (tabs.0 + 1)..<tabs.1),
            let modified: Int64 = decimal(line, (tabs.1 + 1)..<tabs.2),
            let changed: Int64 = decimal(line, (tabs.2 + 1)..<tabs.3),
            let inode: UInt64 = decimal(line, (tabs.3 + 1)..<tabs.4)
        else { return nil }
        return (size, modified, changed, inode)
    }

    /// What a tree of the entries needs of an entry's line (``StatIndex/syncedTreeID()``), read without making any
    /// String: its file name, its content hash, and whether it names a version (in the line or in its blob); `nil`
    /// for a removal or a line that is not an entry's.
    static func treeFields(
        of line: UnsafeBufferPointer<UInt8>
    ) -> (name: UnsafeBufferPointer<UInt8>, hash: UnsafeBufferPointer<UInt8>, namesVersion: Bool)? {
        var tabs: [Int] = []
        tabs.reserveCapacity(8)
        for position in 0..<line.count where line[position] == UInt8(ascii: "\t") {
            tabs.append(position)
            if tabs.count == 8 { break }
        }
        guard tabs.count == 8, tabs[7] == tabs[6] + 2 else { return nil }
        let kind = line[tabs[6] + 1]
        guard kind == UInt8(ascii: "v") || kind == UInt8(ascii: "b") else { return nil }
        return (
            UnsafeBufferPointer(rebasing: line[..<tabs[0]]),
            UnsafeBufferPointer(rebasing: line[(tabs[5] + 1)..<tabs[6]]),
            kind == UInt8(ascii: "b") || tabs[7] + 1 < line.count
        )
    }

    /// The file name at the start of `line` (up to its first tab), as bytes.
    static func nameBytes(of line: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        let tab = UInt8(ascii: "\t")
        var end = 0
        while end < line.count && line[end] != tab { end += 1 }
        return UnsafeBufferPointer(rebasing: line[..<end])
    }

    /// Parses one line (without its newline); `nil` when it is not a line this version writes. Works on bytes: a
    /// String is made only for the four text fields of an entry, never for a number.
    static func parse(_ line: UnsafeBufferPointer<UInt8>) -> Item? {
        let tab = UInt8(ascii: "\t")
        func text(_ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: line[range]), as: UTF8.self)
        }
        if isRemoval(line) {
            return Item(fileName: text(0..<(line.count - 2)), entry: nil)
        }
        var fields: [Range<Int>] = []
        fields.reserveCapacity(9)
        var fieldStart = 0
        for position in 0..<line.count where fields.count < 8 && line[position] == tab {
            fields.append(fieldStart..<position)
            fieldStart = position + 1
        }
        fields.append(fieldStart..<line.count)
        guard fields.count == 9, !fields[0].isEmpty, fields[7].count == 1,
            line[fields[7].lowerBound] == UInt8(ascii: "v") || line[fields[7].lowerBound] == UInt8(ascii: "b"),
            let size: Int64 = decimal(line, fields[2]), let modified: Int64 = decimal(line, fields[3]),
            let changed: Int64 = decimal(line, fields[4]), let inode: UInt64 = decimal(line, fields[5])
        else { return nil }
        let fileName = text(fields[0])
        return Item(
            fileName: fileName,
            entry: StatIndex.Entry(
                fileName: fileName, id: text(fields[1]), size: size, modifiedNanoseconds: modified,
                changedNanoseconds: changed,
                inode: inode, contentHash: text(fields[6]), version: fields[8].isEmpty ? nil : text(fields[8]),
                versionIsInBlob: line[fields[7].lowerBound] == UInt8(ascii: "b")))
    }

    /// Calls `body` with each line of `bytes` (without its newline), skipping blank ones; returns the length of
    /// the part made of whole lines (a last line without its newline is not passed on: it was torn by a crash).
    static func forEachLine(
        in bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) rethrows -> Int {
        let newline = UInt8(ascii: "\n")
        var lineStart = 0
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != newline { lineEnd += 1 }
            if lineEnd == bytes.count { return lineStart }
            if lineEnd > lineStart { try body(UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd])) }
            lineStart = lineEnd + 1
        }
        return lineStart
    }

    /// The decimal number (an optional `-` for a signed type, then digits) in `range` of `line`; `nil` when it is
    /// not one or does not fit in `Number`.
    static func decimal<Number: FixedWidthInteger>(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Number? {
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
            let (next, overflowB) =
                negative
                ? shifted.subtractingReportingOverflow(Number(digit))
                : shifted.addingReportingOverflow(Number(digit))
            guard !overflowA, !overflowB else { return nil }
            value = next
            position += 1
        }
        return value
    }
}
