#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The names in one directory as `readdir` gave them: their bytes in one buffer, each followed by a NUL, and no
/// String per name. A scan lists, `stat`s, sorts and walks a table of a million files this way and makes Strings
/// only for the files it reports; a String per name was a third of a `status`'s own time (allocating, retaining
/// and releasing them), and the listing's biggest part of its memory.
struct DirectoryListing: Sendable {
    /// The directory listed.
    let path: String
    /// Every name's bytes, each followed by a NUL, so that a name is also a C string for `fstatat`.
    private var bytes: [UInt8] = []
    /// Where each name starts in `bytes`.
    private var starts: [UInt32] = []

    /// How many names there are (`.` and `..` are not listed).
    var count: Int { starts.count }

    /// Lists the directory at `path`; an absent directory lists as empty.
    init(_ path: String) throws {
        self.path = path
        bytes.reserveCapacity(64 * 1024)
        try FileSystem.forEachEntry(inDirectory: path) { _, name in
            guard bytes.count < Int(UInt32.max) else {
                throw FileSystemError(operation: "list", path: path, code: EOVERFLOW)
            }
            starts.append(UInt32(bytes.count))
            bytes.append(contentsOf: UnsafeRawBufferPointer(start: name, count: strlen(name) + 1))
        }
    }

    private init(path: String, bytes: [UInt8], starts: [UInt32]) {
        (self.path, self.bytes, self.starts) = (path, bytes, starts)
    }

    /// The name at `position`.
    func name(at position: Int) -> String {
        withNames { String(decoding: $0[position], as: UTF8.self) }
    }

    /// Calls `body` with the names' bytes, valid only during the call.
    func withNames<Result>(_ body: (Names) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeBufferPointer { bytes in
            try starts.withUnsafeBufferPointer { starts in try body(Names(bytes: bytes, starts: starts)) }
        }
    }

    /// The names' bytes by position, without their NULs.
    struct Names {
        fileprivate let bytes: UnsafeBufferPointer<UInt8>
        fileprivate let starts: UnsafeBufferPointer<UInt32>

        subscript(position: Int) -> UnsafeBufferPointer<UInt8> {
            let start = Int(starts[position])
            let end = position + 1 < starts.count ? Int(starts[position + 1]) - 1 : bytes.count - 1
            return UnsafeBufferPointer(rebasing: bytes[start..<end])
        }

        /// The name at `position` as a C string; `nil` only for a listing without names.
        fileprivate func cString(_ position: Int) -> UnsafePointer<CChar>? {
            bytes.baseAddress.map { UnsafeRawPointer($0 + Int(starts[position])).assumingMemoryBound(to: CChar.self) }
        }
    }

    /// The same names in byte order (``StatIndexLine/compare(_:_:)``, the index's order), copied into a new
    /// buffer so that a walk in that order reads memory in order (walking positions sorted over the listing as
    /// read cost a cache miss or two a file). Sorted by a key of each name's first eight bytes
    /// (``radixSortByKey(_:)``), names compared whole only where keys tie: for ids of random hex (UUIDs, as
    /// clients make them) almost never.
    func sorted() -> DirectoryListing {
        withNames { names in
            var keyed = (0..<count).map { position in
                let name = names[position]
                var key: UInt64 = 0
                for index in 0..<8 { key = key << 8 | UInt64(index < name.count ? name[index] : 0) }
                return KeyedPosition(key: key, position: UInt32(position))
            }
            radixSortByKey(&keyed)
            var tieStart = 0
            for end in 1..<(keyed.count + 1) where end == keyed.count || keyed[end].key != keyed[tieStart].key {
                if end - tieStart > 1 {
                    keyed[tieStart..<end].sort {
                        StatIndexLine.compare(names[Int($0.position)], names[Int($1.position)]) < 0
                    }
                }
                tieStart = end
            }
            var sortedBytes: [UInt8] = []
            var sortedStarts: [UInt32] = []
            sortedBytes.reserveCapacity(bytes.count)
            sortedStarts.reserveCapacity(count)
            for item in keyed {
                sortedStarts.append(UInt32(sortedBytes.count))
                sortedBytes.append(contentsOf: names[Int(item.position)])
                sortedBytes.append(0)
            }
            return DirectoryListing(path: path, bytes: sortedBytes, starts: sortedStarts)
        }
    }

    /// Calls `body` with each name's position and status (`nil` for a name that is gone), in order, the `stat`s
    /// taken on the other cores as `body` goes (``pipelinedMap(count:chunkSize:_:consume:)``): a scan's walk of
    /// the index overlaps its `stat`s.
    func forEachStatus(_ body: (_ position: Int, _ status: FileSystem.Status?) throws -> Void) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 || errno == ENOENT else {
            throw FileSystemError(operation: "list", path: path, code: errno)
        }
        defer { if descriptor >= 0 { close(descriptor) } }
        try pipelinedMap(count: count) { position -> Result<FileSystem.Status?, FileSystemError> in
            guard descriptor >= 0 else { return .success(nil) }
            var info = stat()
            let found = withNames { names in
                guard let name = names.cString(position) else { return false }
                return fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0
            }
            guard found else {
                if errno == ENOENT { return .success(nil) }
                return .failure(
                    FileSystemError(operation: "inspect", path: path + "/" + name(at: position), code: errno))
            }
            return .success(FileSystem.Status(info))
        } consume: { range, statuses in
            for (position, status) in zip(range, statuses) { try body(position, status.get()) }
        }
    }
}
