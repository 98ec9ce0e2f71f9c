#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file-system call that failed, with the path and the operating system's reason.
public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done: "read", "write", "rename", "sync", "list", "create directory", "remove", "lock".
    public let operation: String
    /// The path the operation was about.
    public let path: String
    /// The `errno` value.
    public let code: Int32

    /// A failure of `operation` on `path` with the system error `code` (`errno`).
    public init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// `true` when the path did not exist.
    public var isNotFound: Bool { code == ENOENT }

    /// The failure as one sentence: the operation, the path and the system's reason.
    public var description: String {
        "cannot \(operation) \(path): \(String(cString: strerror(code)))"
    }
}
