#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A new file written a piece at a time and then put in place durably, for files too big to hold in memory
/// whole (the stat index's runs): written to a temporary file, synced, renamed over its destination and its
/// directory synced. A crash leaves either no file or the whole one, plus a temporary file recovery deletes.
struct StreamedFile: ~Copyable {
    private let temporaryPath: String
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    /// Bytes handed to ``append(_:)`` so far: the offset the next byte will have in the file.
    private(set) var offset = 0
    private static let bufferSize = 256 * 1024

    /// Starts a new file among the temporary files of `temporaryDirectory`.
    init(temporaryDirectory: String) throws {
        try FileSystem.createDirectory(temporaryDirectory)
        let path = "\(temporaryDirectory)/\(TemporaryName.prefix)\(TemporaryName.unique())"
        let fault = FaultPoint.enter(.write, path)
        defer { fault.leave() }
        if let code = fault.error { throw FileSystemError(operation: "write", path: path, code: code) }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileSystemError(operation: "write", path: path, code: errno) }
        temporaryPath = path
        self.descriptor = descriptor
        buffer.reserveCapacity(Self.bufferSize)
    }

    deinit {
        // Not committed: the partial file goes.
        close(descriptor)
        unlink(temporaryPath)
    }

    /// Adds `bytes` at the end of the file.
    mutating func append(_ bytes: some Collection<UInt8>) throws {
        buffer.append(contentsOf: bytes)
        offset += bytes.count
        if buffer.count >= Self.bufferSize { try flush() }
    }

    private mutating func flush() throws {
        if let failure = FileSystem.writeAll(buffer, to: descriptor, path: temporaryPath, operation: "write") {
            throw failure
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Syncs the file and renames it to `destination` (replacing what is there), then syncs that directory.
    consuming func commit(to destination: String) throws {
        try flush()
        let fault = FaultPoint.enter(.sync, temporaryPath)
        defer { fault.leave() }
        if let code = fault.error ?? (fsync(descriptor) == 0 ? nil : errno) {
            throw FileSystemError(operation: "sync", path: temporaryPath, code: code)
        }
        try FileSystem.rename(temporaryPath, to: destination)
        try FileSystem.sync(FileSystem.parentDirectory(of: destination))
    }
}
