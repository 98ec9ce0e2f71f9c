import Crypto

/// Git's index file (`.git/index`, formats 2 to 4, SHA-1 object names), read for the files of one directory: each
/// file's `stat` as git last saw it and the blob git holds for it. A file whose `stat` still matches its entry holds
/// that blob's bytes, as `git status` takes it; so a scan without its own index learns a file's content hash
/// (``ContentHash``) without reading it (``vouchedHash(for:status:)``), and the directory's tree as git would
/// commit it from the index (``stagedTree``).
///
/// Only what can be vouched for is: an entry marked assume-unchanged, skip-worktree or intent-to-add, one of a
/// merge's stages, or one git's own racy-entry rule distrusts (modified no earlier than the index file was written)
/// vouches for nothing, and its file is read. An index split in two files or kept sparse (the `link` and `sdir`
/// extensions) is not read at all (``read(path:directory:)`` answers `nil`).
package struct GitIndexFile: Sendable {
    /// One entry of the directory.
    struct File: Sendable {
        /// Where its name (the path after the directory) lies in ``names``.
        var name: Range<Int>
        var mode: UInt32
        var changedSeconds: UInt32
        var changedNanoseconds: UInt32
        var modifiedSeconds: UInt32
        var modifiedNanoseconds: UInt32
        var inode: UInt32
        var size: UInt32
        /// Whether git's entry speaks for the work tree's file (none of the flags above, stage 0, not racy).
        var vouches: Bool
        /// Whether the entry belongs in a tree (stage 0, not intent-to-add).
        var committable: Bool
    }

    /// The directory's entries, in git's order (by name bytes).
    private(set) var files: [File] = []
    /// The entries' names, one after the other.
    private(set) var names: [UInt8] = []
    /// The entries' blobs, 20 bytes each, in ``files`` order.
    private(set) var blobs: [UInt8] = []

    /// Reads the entries of `directory` (a path relative to the work tree's root, ending with `/`) from the index
    /// file at `path`; `nil` when there is no such file or it is one this reader does not take (another format, a
    /// split or sparse index, a damaged file): its files are then read, as without it.
    package static func read(path: String, directory: String) throws -> GitIndexFile? {
        guard let status = try FileSystem.status(path), status.isRegularFile else { return nil }
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(path, expectedSize: status.size)
        } catch let error as FileSystemError where error.isNotFound {
            return nil
        }
        return bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer, prefix: Array(directory.utf8), racyFrom: status.modifiedNanoseconds)
            guard var index = parser.parse() else { return nil }
            index.stagedTree = index.treeID()
            return index
        }
    }

    /// The content hash of the file `name` of the directory (its blob), when git's entry vouches for it: the
    /// file's `stat` is the entry's. `nil` otherwise.
    package func vouchedHash(for name: UnsafeBufferPointer<UInt8>, status: FileSystem.Status) -> String? {
        var start = 0
        return vouchedEntry(for: name, status: status, searchingFrom: &start).map(blobHash(at:))
    }

    /// The content hash of the blob of the entry at `position` of ``files``.
    func blobHash(at position: Int) -> String { ContentHash.hex(blobs[(20 * position)..<(20 * position + 20)]) }

    /// Where the entry of the file `name` is in ``files``, when it vouches for the file (its `stat` is `status`),
    /// for names asked in name order: the search starts at `start` (0 for the first name), and leaves it at the
    /// first entry not before the name, where the next name's search starts. A walk of a listing that git's index
    /// has whole finds each name one entry on, without a search.
    func vouchedEntry(
        for name: UnsafeBufferPointer<UInt8>, status: FileSystem.Status, searchingFrom start: inout Int
    ) -> Int? {
        func isBefore(_ position: Int) -> Bool {
            names.withUnsafeBufferPointer {
                StatIndexLine.compare(UnsafeBufferPointer(rebasing: $0[files[position].name]), name) < 0
            }
        }
        start = min(start, files.count)
        if start < files.count && isBefore(start) { start += 1 }
        if start < files.count && isBefore(start) {
            let from = start
            start = from + partitionPoint(files.count - from) { isBefore(from + $0) }
        }
        let found = start
        guard found < files.count else { return nil }
        let file = files[found]
        let sameName = names.withUnsafeBufferPointer {
            StatIndexLine.compare(UnsafeBufferPointer(rebasing: $0[file.name]), name) == 0
        }
        guard sameName, file.vouches, Self.stat(status, matches: file) else { return nil }
        return found
    }

    /// Whether the work tree holds the very bytes of git's blobs, as far as a sample tells: the first file of
    /// `directory` (the work tree's directory of this index's files) that git's entry vouches for is read and hashed.
    /// `false` when its bytes differ from its blob: git converts them on checkout (`core.autocrlf`, an `eol`,
    /// `filter` or `working-tree-encoding` attribute), so an entry made from the blob would not name the file's
    /// bytes, and nothing is vouched for.
    package func holdsBlobBytes(directory: String) throws -> Bool {
        for (position, file) in files.enumerated() where file.vouches {
            let name = String(decoding: names[file.name], as: UTF8.self)
            guard let status = try FileSystem.status(directory + "/" + name), Self.stat(status, matches: file) else {
                continue
            }
            let bytes = try FileSystem.readFile(directory + "/" + name, expectedSize: status.size)
            return ContentHash.of(bytes) == ContentHash.hex(blobs[(20 * position)..<(20 * position + 20)])
        }
        return true
    }

    /// Whether `status` is the `stat` git recorded in `file`: sizes, times to the nanosecond and inodes as git
    /// keeps them (the low 32 bits).
    static func stat(_ status: FileSystem.Status, matches file: File) -> Bool {
        func split(_ nanoseconds: Int64) -> (UInt32, UInt32) {
            let seconds = nanoseconds >= 0 ? nanoseconds / 1_000_000_000 : (nanoseconds + 1) / 1_000_000_000 - 1
            return (
                UInt32(truncatingIfNeeded: seconds), UInt32(truncatingIfNeeded: nanoseconds - seconds * 1_000_000_000)
            )
        }
        let modified = split(status.modifiedNanoseconds)
        let changed = split(status.changedNanoseconds)
        return status.isRegularFile && UInt32(truncatingIfNeeded: status.size) == file.size
            && modified == (file.modifiedSeconds, file.modifiedNanoseconds)
            && changed == (file.changedSeconds, file.changedNanoseconds)
            && UInt32(truncatingIfNeeded: status.inode) == file.inode
    }

    /// The id of the tree git would commit for the directory from this index (``GitTree``); `nil` when it holds
    /// no file, a subdirectory, or an entry that is no part of a tree (a merge's stage, intent-to-add).
    package private(set) var stagedTree: String?

    private func treeID() -> String? {
        guard !files.isEmpty else { return nil }
        var tree = GitTree(capacity: files.count)
        for (position, file) in files.enumerated() {
            guard file.committable, !names[file.name].contains(UInt8(ascii: "/")) else { return nil }
            tree.append(mode: file.mode, name: names[file.name], blob: blobs[(20 * position)..<(20 * position + 20)])
        }
        return tree.id
    }

    /// Calls `body` with the name of each file of the directory, as bytes, in name order.
    package func forEachName(_ body: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        try names.withUnsafeBufferPointer { names in
            for file in files { try body(UnsafeBufferPointer(rebasing: names[file.name])) }
        }
    }

    /// Reads the index's bytes; every offset is checked against its end.
    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        let prefix: [UInt8]
        let racyFrom: Int64
        var index = GitIndexFile()

        mutating func parse() -> GitIndexFile? {
            // Header, entries, extensions, then the SHA-1 of all before it.
            guard bytes.count >= 12 + 20, bytes[0] == 0x44, bytes[1] == 0x49, bytes[2] == 0x52, bytes[3] == 0x43
            else { return nil }
            let version = word(4)
            let count = Int(word(8))
            guard (2...4).contains(version) else { return nil }
            var offset = 12
            var previousPath: [UInt8] = []
            let end = bytes.count - 20
            for _ in 0..<count {
                // 40 bytes of `stat` data, the blob, 16 bits of flags, 16 more in format 3 and up when extended.
                guard offset + 62 <= end else { return nil }
                let flags = UInt16(bytes[offset + 60]) << 8 | UInt16(bytes[offset + 61])
                let extended = flags & 0x4000 != 0
                guard !extended || version >= 3 else { return nil }
                var extendedFlags: UInt16 = 0
                var pathStart = offset + 62
                if extended {
                    guard offset + 64 <= end else { return nil }
                    extendedFlags = UInt16(bytes[offset + 62]) << 8 | UInt16(bytes[offset + 63])
                    pathStart += 2
                }
                let next: Int
                if version == 4 {
                    // A number of bytes to drop from the previous path (a varint), then the rest, NUL-ended.
                    var position = pathStart
                    guard position < end else { return nil }
                    var dropped = Int(bytes[position] & 0x7F)
                    while bytes[position] & 0x80 != 0 {
                        position += 1
                        guard position < end, dropped < Int.max >> 8 else { return nil }
                        dropped = ((dropped + 1) << 7) | Int(bytes[position] & 0x7F)
                    }
                    position += 1
                    guard dropped <= previousPath.count, let nul = nulPosition(from: position, before: end) else {
                        return nil
                    }
                    previousPath.removeLast(dropped)
                    previousPath.append(contentsOf: bytes[position..<nul])
                    next = nul + 1
                    if previousPath.starts(with: prefix) {
                        add(entryAt: offset, name: previousPath[prefix.count...], flags: flags, extended: extendedFlags)
                    }
                } else {
                    guard let nul = nulPosition(from: pathStart, before: end) else { return nil }
                    // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
                    next = offset + ((nul - offset + 8) & ~7)
                    guard next <= end else { return nil }
                    let path = bytes[pathStart..<nul]
                    if path.starts(with: prefix) {
                        add(
                            entryAt: offset, name: path[(pathStart + prefix.count)...], flags: flags,
                            extended: extendedFlags)
                    }
                }
                offset = next
            }
            guard !hasUnreadableExtension(from: offset, before: end) else { return nil }
            return index
        }

        private mutating func add(
            entryAt offset: Int, name: some Collection<UInt8>, flags: UInt16, extended: UInt16
        ) {
            let stage = (flags >> 12) & 0x3
            let assumeUnchanged = flags & 0x8000 != 0
            let skipWorktree = extended & 0x4000 != 0
            let intentToAdd = extended & 0x2000 != 0
            let modifiedSeconds = word(offset + 8)
            let modifiedNanoseconds = word(offset + 12)
            let modified = Int64(modifiedSeconds) * 1_000_000_000 + Int64(modifiedNanoseconds)
            let start = index.names.count
            index.names.append(contentsOf: name)
            index.files.append(
                File(
                    name: start..<index.names.count, mode: word(offset + 24), changedSeconds: word(offset),
                    changedNanoseconds: word(offset + 4), modifiedSeconds: modifiedSeconds,
                    modifiedNanoseconds: modifiedNanoseconds, inode: word(offset + 20), size: word(offset + 36),
                    vouches: stage == 0 && !assumeUnchanged && !skipWorktree && !intentToAdd && modified < racyFrom,
                    committable: stage == 0 && !intentToAdd))
            index.blobs.append(contentsOf: bytes[(offset + 40)..<(offset + 60)])
        }

        /// Whether an extension that changes what the entries mean follows them: `link` (the rest of the entries
        /// live in a shared index) or `sdir` (directories stand for their files).
        private func hasUnreadableExtension(from start: Int, before end: Int) -> Bool {
            var offset = start
            while offset + 8 <= end {
                let signature = Array(bytes[offset..<(offset + 4)])
                if signature == Array("link".utf8) || signature == Array("sdir".utf8) { return true }
                offset += 8 + Int(word(offset + 4))
            }
            return false
        }

        private func nulPosition(from start: Int, before end: Int) -> Int? {
            var position = start
            while position < end {
                if bytes[position] == 0 { return position }
                position += 1
            }
            return nil
        }

        /// The big-endian 32-bit number at `offset`.
        private func word(_ offset: Int) -> UInt32 {
            UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
                | UInt32(bytes[offset + 3])
        }
    }
}

/// Git's tree object of a directory of files, built entry by entry, for its id as git would commit it.
package struct GitTree {
    /// The mode of a regular file that is not executable, as git records it.
    package static let fileMode: UInt32 = 0o100644

    /// For each file, its mode in octal, a space, its name, a NUL and its blob's 20 bytes.
    private var content: [UInt8] = []

    /// An empty tree, with room for about `capacity` files.
    package init(capacity: Int = 0) {
        content.reserveCapacity(capacity * 64)
    }

    /// Adds a file; files come in name order by bytes, as git sorts a tree of files.
    package mutating func append(mode: UInt32, name: some Collection<UInt8>, blob: some Collection<UInt8>) {
        content.append(contentsOf: String(mode, radix: 8).utf8)
        content.append(UInt8(ascii: " "))
        content.append(contentsOf: name)
        content.append(0)
        content.append(contentsOf: blob)
    }

    /// The tree's SHA-1 id: of `tree <size>`, a NUL and the content.
    package var id: String {
        var hasher = Insecure.SHA1()
        hasher.update(data: Array("tree \(content.count)\0".utf8))
        hasher.update(data: content)
        return ContentHash.hex(Array(hasher.finalize()))
    }
}
