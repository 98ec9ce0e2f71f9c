#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A directory held open while many of its files are read (``FileSystem/readFile(_:in:path:expectedSize:)``),
/// closed when the last reference goes.
package final class OpenDirectory: Sendable {
    let descriptor: Int32

    /// Opens the directory at `path`.
    /// - Throws: ``FileSystemError`` naming the path.
    package init(_ path: String) throws {
        descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileSystemError(operation: "open", path: path, code: errno) }
    }

    deinit { close(descriptor) }
}
