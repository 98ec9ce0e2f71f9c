#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFileSystem

/// The disk floor of a pull: the same record files written with the client's durability scheme
/// (`DurableFileBatch`: every file of a page to a temporary file, one `syncfs`, a rename each, one `fsync` of
/// the directory), page by page, with no HTTP, no JSON decoding, no index and no intent file. A pull cannot
/// beat it; the ratio says how much of a pull's time is the disk's.
struct DiskFloor {
    /// `(file name, canonical bytes)` of each record, in pull order.
    let files: [(name: String, bytes: [UInt8])]
    let pageSize: Int

    /// Writes every file into `directory` (created, must not hold the files yet), using `temporaryDirectory`
    /// on the same file system; returns the seconds taken.
    func run(directory: String, temporaryDirectory: String) throws -> Double {
        let start = Clock.now()
        try makeDirectory(directory)
        try makeDirectory(temporaryDirectory)
        var first = 0
        while first < files.count {
            let page = files[first..<min(first + pageSize, files.count)]
            var temporaryPaths: [String] = []
            temporaryPaths.reserveCapacity(page.count)
            for (offset, file) in page.enumerated() {
                let path = "\(temporaryDirectory)/tmp-\(first + offset)"
                try writeNewFile(path, file.bytes)
                temporaryPaths.append(path)
            }
            try syncFileSystem(containing: temporaryDirectory)
            for (offset, file) in page.enumerated() {
                guard rename(temporaryPaths[offset], directory + "/" + file.name) == 0 else {
                    throw failure("rename", directory)
                }
            }
            try syncPath(directory)
            first += pageSize
        }
        return Clock.now() - start
    }
}

/// The disk floor of a push of hand edits: the file work any client must do — read each edited file once, then
/// replace each with its new content durably the way the client does it (`DurableFileBatch` with spare files:
/// written over spares made beforehand, one `syncfs` per batch, swapped in with `renameat2(RENAME_EXCHANGE)`, one
/// `fsync` of each directory) — with no HTTP, no server, no JSON, no hashing, no index and no journal. No push of
/// these edits can beat it, one request each or batched; the single route's time over it bounds the speed-up
/// batching can show on this machine.
struct PushDiskFloor {
    /// File names in `directory`, in push order.
    let names: [String]
    let batchSize: Int

    /// Reads and replaces every file, with `spareDirectory` (same file system, empty) for the spares, created
    /// before the clock starts as the client's kept spares are; returns the seconds taken.
    func run(directory: String, spareDirectory: String) throws -> Double {
        try makeDirectory(spareDirectory)
        let spares = (0..<min(batchSize, names.count)).map { "\(spareDirectory)/spare-\($0)" }
        for spare in spares { try writeNewFile(spare, [UInt8](repeating: 0x20, count: 1)) }
        try syncFileSystem(containing: spareDirectory)
        let start = Clock.now()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var first = 0
        while first < names.count {
            let batch = names[first..<min(first + batchSize, names.count)]
            for (offset, name) in batch.enumerated() {
                let count = try readFile(directory + "/" + name, into: &buffer)
                try overwriteFile(spares[offset], Array(buffer[..<count]))
            }
            try syncFileSystem(containing: spareDirectory)
            for (offset, name) in batch.enumerated() {
                try exchange(spares[offset], directory + "/" + name)
            }
            try syncPath(directory)
            try syncPath(spareDirectory)
            first += batchSize
        }
        return Clock.now() - start
    }
}

// The raw calls of the floors, also used by ``DurableBatchProbe``: no fault hook, no index, nothing but the call.

func makeDirectory(_ path: String) throws {
    guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw failure("mkdir", path) }
}

func writeNewFile(_ path: String, _ bytes: [UInt8]) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw failure("open", path) }
    defer { close(descriptor) }
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard written == bytes.count else { throw failure("write", path) }
}

func syncFileSystem(containing path: String) throws {
    #if os(Linux)
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw failure("open", path) }
    defer { close(descriptor) }
    guard tablesync_syncfs(descriptor) == 0 else { throw failure("syncfs", path) }
    #else
    sync()
    #endif
}

func syncPath(_ path: String) throws {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw failure("open", path) }
    defer { close(descriptor) }
    guard fsync(descriptor) == 0 else { throw failure("fsync", path) }
}

private func failure(_ operation: String, _ path: String) -> BenchError {
    BenchError(what: operation, detail: "\(path): errno \(errno)")
}

private func readFile(_ path: String, into buffer: inout [UInt8]) throws -> Int {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw failure("open", path) }
    defer { close(descriptor) }
    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    guard count >= 0 else { throw failure("read", path) }
    return count
}

private func overwriteFile(_ path: String, _ bytes: [UInt8]) throws {
    let descriptor = open(path, O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw failure("open", path) }
    defer { close(descriptor) }
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard written == bytes.count, ftruncate(descriptor, off_t(bytes.count)) == 0 else { throw failure("write", path) }
}

private func exchange(_ spare: String, _ destination: String) throws {
    #if os(Linux)
    guard tablesync_renameat2(AT_FDCWD, spare, AT_FDCWD, destination, TABLESYNC_RENAME_EXCHANGE) == 0 else {
        throw failure("renameat2", destination)
    }
    #else
    guard rename(spare, destination) == 0 else { throw failure("rename", destination) }
    #endif
}
