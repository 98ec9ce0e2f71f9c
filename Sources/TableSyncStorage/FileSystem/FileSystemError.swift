#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file-system call that failed, with the path and the operating system's reason.
public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done: "read", "write", "rename", "sync", "list", "create directory", "remove", "lock".
    package let operation: String
    /// The path the operation was about.
    package let path: String
    /// The `errno` value.
    package let code: Int32

    /// A failure of `operation` on `path` with the system error `code` (`errno`).
    package init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// `true` when the path did not exist.
    package var isNotFound: Bool { code == ENOENT }

    /// `true` when the file system (or the user's quota) is full.
    package var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT }

    /// The failure as one sentence: the operation, the path and the system's reason; on a full disk, what a push,
    /// pull or sync frees (the spare files it keeps for the next run) and that nothing of the store is lost.
    public var description: String {
        let reason = "cannot \(operation) \(path): \(String(cString: strerror(code)))"
        return isOutOfSpace
            ? reason
                + """
                ; nothing was lost (a push, pull or sync that meets a full disk removes the store's spare files, \
                .tablesync/spares): free space and run again
                """
            : reason
    }
}
