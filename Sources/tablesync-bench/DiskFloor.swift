#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if os(Linux)
@_silgen_name("syncfs")
private func linuxSyncFileSystem(_ descriptor: Int32) -> Int32
#endif

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
                guard rename(temporaryPaths[offset], directory + "/" + file.name) == 0 else { throw failure("rename", directory) }
            }
            try syncPath(directory)
            first += pageSize
        }
        return Clock.now() - start
    }

    private func makeDirectory(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw failure("mkdir", path) }
    }

    private func writeNewFile(_ path: String, _ bytes: [UInt8]) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("open", path) }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw failure("write", path) }
    }

    private func syncFileSystem(containing path: String) throws {
        #if os(Linux)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open", path) }
        defer { close(descriptor) }
        guard linuxSyncFileSystem(descriptor) == 0 else { throw failure("syncfs", path) }
        #else
        sync()
        #endif
    }

    private func syncPath(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open", path) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("fsync", path) }
    }

    private func failure(_ operation: String, _ path: String) -> BenchError {
        BenchError(what: operation, detail: "\(path): errno \(errno)")
    }
}
