#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lines of one source of the stat index in name order, one at a time: a run read from disk a large piece at a
/// time, or lines held in memory (the log's, sorted). Hands out each line as bytes in place; nothing is parsed
/// unless asked.
struct IndexLineCursor {
    private var buffer: [UInt8]
    /// The current line in `buffer` (without its newline); empty after the last.
    private var line = 0..<0
    /// `true` after the last line.
    private(set) var isAtEnd = false
    /// Where the line after it starts in `buffer`.
    private var next = 0
    private let run: IndexRun?
    /// The offset in the run's file of the first byte not read yet.
    private var position = 0
    /// Entries of this source whose file was modified at or after this time are racily clean.
    let racyFrom: Int64
    private static let chunkSize = 256 * 1024

    /// The lines of `run`, from its first.
    init(run: IndexRun) throws {
        buffer = []
        self.run = run
        position = run.body.lowerBound
        racyFrom = run.modifiedNanoseconds
        try advance()
    }

    /// The lines in `lines` (each ending with a newline, in name order).
    init(lines: [UInt8], racyFrom: Int64) throws {
        buffer = lines
        run = nil
        self.racyFrom = racyFrom
        try advance()
    }

    /// Calls `body` with the current line (empty at the end).
    func withLine<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try buffer.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[line])) }
    }

    /// Moves to the next line.
    mutating func advance() throws {
        while true {
            let newline = buffer.withUnsafeBufferPointer { bytes -> Int? in
                guard next < bytes.count, let base = bytes.baseAddress,
                    let found = memchr(base + next, Int32(UInt8(ascii: "\n")), bytes.count - next)
                else { return nil }
                return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }
            if let newline {
                line = next..<newline
                next = newline + 1
                if !line.isEmpty { return }
                continue
            }
            guard let run, position < run.body.upperBound else {
                if next < buffer.count { throw damaged("its last line has no end") }
                line = 0..<0
                isAtEnd = true
                return
            }
            buffer.removeSubrange(..<next)
            next = 0
            let end = min(run.body.upperBound, position + Self.chunkSize)
            buffer.append(contentsOf: try run.file.read(position..<end))
            position = end
        }
    }

    /// The error for a damaged line of this source.
    func damaged(_ reason: String) -> StoreError {
        .damagedIndex(file: run?.path ?? "the stat index's log", reason: reason)
    }
}

/// Several sources of index lines, each in name order, walked as one in that order: for a name that several
/// mention, the newest source's line is the one seen. What a merge of runs copies (line by line, unparsed), and
/// what a scan walks beside the sorted directory listing.
struct IndexItemMerge {
    /// One source: a run read from disk, or lines held in memory (the log's) with the time from which their entries
    /// are racily clean.
    enum Source {
        case run(IndexRun)
        case lines([UInt8], modifiedNanoseconds: Int64)
    }

    /// Newest first.
    private var cursors: [IndexLineCursor]
    /// The cursor whose line is the current one, while ``isOnLine``.
    private var current = 0
    /// `true` once ``step()`` moved to a line, until it passes the last.
    private var isOnLine = false

    /// Merges `sources`, given newest first; ``step()`` moves to the first name.
    init(newestFirst sources: [Source]) throws {
        cursors = try sources.map { source in
            switch source {
            case .run(let run): try IndexLineCursor(run: run)
            case .lines(let lines, let time): try IndexLineCursor(lines: lines, racyFrom: time)
            }
        }
    }

    /// Moves to the next file name (the first, at the first call); `false` after the last.
    mutating func step() throws -> Bool {
        if isOnLine {
            // Older sources' lines for the same name are passed over with it.
            for index in cursors.indices where index != current && !cursors[index].isAtEnd {
                let same = cursors[current].withLine { winner in
                    cursors[index].withLine {
                        StatIndexLine.compare(StatIndexLine.nameBytes(of: winner), StatIndexLine.nameBytes(of: $0)) == 0
                    }
                }
                if same { try cursors[index].advance() }
            }
            try cursors[current].advance()
        }
        var chosen: Int?
        for index in cursors.indices where !cursors[index].isAtEnd {
            // Strictly before: on a tie the newer (earlier) source stays the current one.
            guard let best = chosen else {
                chosen = index
                continue
            }
            let before = cursors[index].withLine { candidate in
                cursors[best].withLine {
                    StatIndexLine.compare(StatIndexLine.nameBytes(of: candidate), StatIndexLine.nameBytes(of: $0)) < 0
                }
            }
            if before { chosen = index }
        }
        current = chosen ?? 0
        isOnLine = chosen != nil
        return isOnLine
    }

    /// Calls `body` with the current line; ``step()`` must have returned `true`.
    func withLine<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try cursors[current].withLine(body)
    }

    /// Negative, zero or positive as the current line's file name sorts before, as or after `name`.
    func compareName(to name: UnsafeBufferPointer<UInt8>) -> Int {
        withLine { StatIndexLine.compare(StatIndexLine.nameBytes(of: $0), name) }
    }

    /// `true` when the current line is a removal.
    var isRemoval: Bool { withLine(StatIndexLine.isRemoval) }

    /// `true` when the current line is an entry that vouches for a file whose status is `status` (its `stat`
    /// fields match and it is not racily clean), read without parsing the rest of the line.
    func vouches(for status: FileSystem.Status) -> Bool {
        guard let fields = withLine(StatIndexLine.statFields) else { return false }
        return !StatIndex.Entry.isRacilyClean(modified: fields.modified, racyFrom: cursors[current].racyFrom)
            && StatIndex.Entry.stat(
                status, matchesSize: fields.size, modified: fields.modified, changed: fields.changed,
                inode: fields.inode)
    }

    /// The current line parsed, its entry checked for being racily clean against its source.
    func item() throws -> StatIndexLine.Item {
        guard var item = withLine(StatIndexLine.parse) else { throw cursors[current].damaged("a line cannot be read") }
        item.entry = item.entry?.checked(racyFrom: cursors[current].racyFrom)
        return item
    }
}
