/// One sorted, immutable file of the stat index: `.tablesync/index/<table>.<first>-<last>.run`, holding the
/// entries and removals that the index's log held when it was flushed (sequence `first` = `last`), or the
/// merge of the runs `first` through `last`. Read by `pread`, never loaded whole: a lookup reads one block of
/// ``itemsPerBlock`` lines, found through the run's fences (the first name of every block, kept in memory) after
/// its Bloom filter (``IndexRunFilter``) has said the name may be there.
///
/// The file: a header line, the lines (``StatIndexLine``) sorted by file name, one name per line; then the fences
/// (`offset<TAB>name` lines), the filter's bytes, and a trailer of fixed length giving where fences and filter
/// start and how many lines there are. Written once through a temporary file (``StreamedFile``), so a run on
/// disk is always whole.
final class IndexRun: Sendable {
    /// The log flushes it holds: a run `first-last` replaces the runs whose sequences lie within.
    let sequences: ClosedRange<Int>
    /// Its lines: entries and removals.
    let itemCount: Int
    /// The file, and the part of it holding the lines.
    let file: RandomAccessFile
    let body: Range<Int>
    private let fences: Fences
    private let filter: IndexRunFilter

    /// The first name and the offset of every block, the names in one buffer: no String is kept per block.
    private struct Fences: Sendable {
        private var names: [UInt8] = []
        private var nameEnds: [Int] = []
        private(set) var offsets: [Int] = []

        var count: Int { offsets.count }

        init(expectedBlocks: Int = 0) {
            names.reserveCapacity(expectedBlocks * 48)
            nameEnds.reserveCapacity(expectedBlocks)
            offsets.reserveCapacity(expectedBlocks)
        }

        /// Appends the fence lines (`offset TAB name`) to `file`.
        func write(to file: inout StreamedFile) throws {
            for block in offsets.indices {
                try file.append(String(offsets[block]).utf8)
                try file.append(CollectionOfOne(UInt8(ascii: "\t")))
                try file.append(names[(block == 0 ? 0 : nameEnds[block - 1])..<nameEnds[block]])
                try file.append(CollectionOfOne(UInt8(ascii: "\n")))
            }
        }

        mutating func append(name: UnsafeBufferPointer<UInt8>, offset: Int) {
            names.append(contentsOf: name)
            nameEnds.append(names.count)
            offsets.append(offset)
        }

        /// The number of blocks whose first name is not after `name`.
        func blocksNotAfter(_ name: String) -> Int {
            var name = name
            return name.withUTF8 { target in
                names.withUnsafeBufferPointer { bytes in
                    partitionPoint(offsets.count) { block in
                        let first = UnsafeBufferPointer(
                            rebasing: bytes[(block == 0 ? 0 : nameEnds[block - 1])..<nameEnds[block]])
                        return StatIndexLine.compare(first, target) <= 0
                    }
                }
            }
        }
    }

    static let header = "tablesync-index-run 2\n"
    /// Lines per block: what one lookup reads (about 6 KB). Fewer would mean more fences held in memory.
    static let itemsPerBlock = 32
    private static let trailerTag = "tablesync-run-end"
    private static let trailerLength = 66

    /// The file's path.
    var path: String { file.path }
    /// Entries whose file was modified at or after this time are racily clean (see ``StatIndex``).
    var modifiedNanoseconds: Int64 { file.modifiedNanoseconds }

    /// The name of the run file of `table` holding `sequences`.
    static func fileName(table: String, sequences: ClosedRange<Int>) -> String {
        "\(table).\(sequences.lowerBound)-\(sequences.upperBound).run"
    }

    /// The sequences of a run file of `table` named `name`, or `nil` when `name` is not one.
    static func sequences(ofFileName name: String, table: String) -> ClosedRange<Int>? {
        let prefix = table + "."
        let suffix = ".run"
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let middle = name.dropFirst(prefix.count).dropLast(suffix.count).split(
            separator: "-", omittingEmptySubsequences: false)
        guard middle.count == 2, middle.allSatisfy({ !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }),
            let first = Int(middle[0]), let last = Int(middle[1]), first >= 1, first <= last
        else { return nil }
        return first...last
    }

    /// Opens the run at `path`; `nil` when the file is not a whole run this version wrote.
    static func open(path: String, sequences: ClosedRange<Int>) throws -> IndexRun? {
        let file = try RandomAccessFile(path: path)
        let headerLength = header.utf8.count
        guard file.size >= headerLength + trailerLength,
            try file.read(0..<headerLength).elementsEqual(header.utf8)
        else { return nil }
        let trailer = String(decoding: try file.read((file.size - trailerLength)..<file.size), as: UTF8.self)
        let numbers = trailer.dropLast().split(separator: " ")
        guard trailer.last == "\n", numbers.count == 4, numbers[0] == trailerTag,
            let fencesStart = Int(numbers[1]), let filterStart = Int(numbers[2]), let itemCount = Int(numbers[3]),
            headerLength <= fencesStart, fencesStart <= filterStart, filterStart < file.size - trailerLength,
            let filter = IndexRunFilter(bytes: try file.read(filterStart..<(file.size - trailerLength)))
        else { return nil }
        var fences = Fences(expectedBlocks: (itemCount + itemsPerBlock - 1) / itemsPerBlock)
        let fenceBytes = try file.read(fencesStart..<filterStart)
        var valid = true
        let whole = fenceBytes.withUnsafeBufferPointer { buffer in
            StatIndexLine.forEachLine(in: buffer) { line in
                // `offset TAB name`: the first field is the block's offset.
                let offsetField = StatIndexLine.nameBytes(of: line)
                guard let offset: Int = StatIndexLine.decimal(line, 0..<offsetField.count),
                    offsetField.count + 1 < line.count,
                    offset >= headerLength, offset < fencesStart, fences.offsets.last.map({ $0 < offset }) ?? true
                else {
                    valid = false
                    return
                }
                fences.append(name: UnsafeBufferPointer(rebasing: line[(offsetField.count + 1)...]), offset: offset)
            }
        }
        guard valid, whole == fenceBytes.count, fences.count == (itemCount + itemsPerBlock - 1) / itemsPerBlock else {
            return nil
        }
        return IndexRun(
            sequences: sequences, itemCount: itemCount, file: file, fences: fences,
            body: headerLength..<fencesStart, filter: filter)
    }

    private init(
        sequences: ClosedRange<Int>, itemCount: Int, file: RandomAccessFile, fences: Fences, body: Range<Int>,
        filter: IndexRunFilter
    ) {
        self.sequences = sequences
        self.itemCount = itemCount
        self.file = file
        self.fences = fences
        self.body = body
        self.filter = filter
    }

    /// What the run says of `name`: its entry, its removal, or `nil` when the run does not mention it.
    func item(named name: String) throws -> StatIndexLine.Item? {
        guard filter.mayContain(name.utf8) else { return nil }
        // The last block whose first name is not after `name`.
        let blocks = fences.blocksNotAfter(name)
        guard blocks > 0 else { return nil }
        let block = fences.offsets[blocks - 1]..<(blocks < fences.count ? fences.offsets[blocks] : body.upperBound)
        let bytes = try file.read(block)
        let target = Array(name.utf8)
        var found: StatIndexLine.Item??
        _ = try bytes.withUnsafeBufferPointer { buffer in
            try StatIndexLine.forEachLine(in: buffer) { line in
                guard found == nil, StatIndexLine.nameBytes(of: line).elementsEqual(target) else { return }
                guard let item = StatIndexLine.parse(line) else {
                    throw damaged("a line of the block at byte \(block.lowerBound) cannot be read")
                }
                found = .some(item)
            }
        }
        return found ?? nil
    }

    func damaged(_ reason: String) -> StoreError { .damagedIndex(file: path, reason: reason) }

    /// Writes a run of `table` holding `sequences` from the lines `produce` hands to its argument (each without its
    /// newline, in increasing name order by ``StatIndexLine/compare(_:_:)``, each name once; at most `capacity` of
    /// them) and opens it. Its fences and filter are built as it is written and kept, not read back: a merge's
    /// passing buffers are what the process's peak memory is made of, so there are as few as can be.
    static func write(
        table: String, sequences: ClosedRange<Int>, layout: StoreLayout, capacity: Int,
        lines produce: (_ emit: (UnsafeBufferPointer<UInt8>) throws -> Void) throws -> Void
    ) throws -> IndexRun {
        var file = try StreamedFile(temporaryDirectory: layout.temporaryDirectory)
        try file.append(header.utf8)
        var filter = IndexRunFilter(capacity: capacity)
        var fences = Fences(expectedBlocks: (capacity + itemsPerBlock - 1) / itemsPerBlock)
        var count = 0
        try produce { line in
            let name = StatIndexLine.nameBytes(of: line)
            if count % itemsPerBlock == 0 { fences.append(name: name, offset: file.offset) }
            filter.insert(name)
            try file.append(line)
            try file.append(CollectionOfOne(UInt8(ascii: "\n")))
            count += 1
        }
        let fencesStart = file.offset
        try fences.write(to: &file)
        let filterStart = file.offset
        try filter.write(to: &file)
        try file.append(trailer(fencesStart: fencesStart, filterStart: filterStart, itemCount: count).utf8)
        let path = layout.indexDirectory + "/" + fileName(table: table, sequences: sequences)
        try file.commit(to: path)
        return IndexRun(
            sequences: sequences, itemCount: count, file: try RandomAccessFile(path: path), fences: fences,
            body: header.utf8.count..<fencesStart, filter: filter)
    }

    private static func trailer(fencesStart: Int, filterStart: Int, itemCount: Int) -> String {
        func padded(_ number: Int) -> String {
            String(repeating: "0", count: max(0, 15 - String(number).count)) + String(number)
        }
        let trailer = "\(trailerTag) \(padded(fencesStart)) \(padded(filterStart)) \(padded(itemCount))\n"
        precondition(trailer.utf8.count == trailerLength)
        return trailer
    }
}
