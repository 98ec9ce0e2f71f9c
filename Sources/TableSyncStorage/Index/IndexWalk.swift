/// The stat index's lines walked in name order beside a table's sorted listing: each listed record file is
/// matched with its line, and the lines passed over are entries whose file is not listed.
struct IndexWalk {
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
