#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file kept open for reading at any offset (`pread`), without mapping it: pages read this way stay in the
/// kernel's cache and do not count towards the process's resident memory. Closed when the last reference goes.
final class RandomAccessFile: Sendable {
    /// The path the file was opened at, for error messages.
    let path: String
    /// Its size when it was opened.
    let size: Int
    /// Its modification time when it was opened.
    let modifiedNanoseconds: Int64
    private let descriptor: Int32

    /// Opens the file at `path` for reading.
    init(path: String) throws {
        let fault = FaultPoint.enter(.read, path)
        if let code = fault.error { throw FileSystemError(operation: "read", path: path, code: code) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileSystemError(operation: "read", path: path, code: errno) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw FileSystemError(operation: "read", path: path, code: code)
        }
        self.path = path
        self.descriptor = descriptor
        let status = FileSystem.Status(info)
        size = Int(status.size)
        modifiedNanoseconds = status.modifiedNanoseconds
    }

    deinit { close(descriptor) }

    /// The bytes in `range` of the file (fewer when the file ends first).
    func read(_ range: Range<Int>) throws -> [UInt8] {
        guard !range.isEmpty else { return [] }
        var bytes = [UInt8](repeating: 0, count: range.count)
        var count = 0
        while count < range.count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                guard let base = buffer.baseAddress else { return 0 }
                return pread(descriptor, base + count, range.count - count, off_t(range.lowerBound + count))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(operation: "read", path: path, code: errno)
            }
            if result == 0 { break }
            count += result
        }
        if count < bytes.count { bytes.removeSubrange(count...) }
        return bytes
    }
}
