#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFileSystem

/// The few file-system calls the store makes, in one place: each failure becomes a ``FileSystemError`` that
/// names the path, and no call goes through Foundation's `Data.write`, which fsyncs every file. In debug builds
/// every call passes the fault hook (``FaultPoint``), which can fail it or kill the process after it.
package enum FileSystem {
    /// What `stat` says about a file, as far as change detection cares.
    package struct Status: Equatable, Sendable {
        package var size: Int64
        var modifiedNanoseconds: Int64
        var changedNanoseconds: Int64
        var inode: UInt64
        package var isDirectory: Bool
        package var isRegularFile: Bool
    }

    /// Which file or directory a path names: the device and inode, which a directory removed and made again at the
    /// same path (a re-clone in place) does not keep.
    package struct Identity: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    /// The identity of what `path` names now; `nil` when nothing does.
    package static func identity(_ path: String) -> Identity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// The contents of the file at `path`. `expectedSize`, from a `stat` of the caller's that found a regular file,
    /// saves asking for its size again.
    package static func readFile(_ path: String, expectedSize: Int64? = nil) throws -> [UInt8] {
        try readFile(path, in: nil, expectedSize: expectedSize)
    }

    /// The contents of the file `name` in the open `directory` (``OpenDirectory``), `path` naming it in errors: one
    /// path component for the kernel to look up, where a whole path is walked again for every file.
    package static func readFile(
        _ name: String, in directory: OpenDirectory, path: String, expectedSize: Int64? = nil
    ) throws -> [UInt8] {
        try readFile(path, in: (directory, name), expectedSize: expectedSize)
    }

    private static func readFile(
        _ path: String, in directory: (OpenDirectory, name: String)?, expectedSize: Int64?
    ) throws -> [UInt8] {
        let fault = FaultPoint.enter(.read, path)
        if let code = fault.error { throw FileSystemError(operation: "read", path: path, code: code) }
        let descriptor =
            directory.map { openat($0.0.descriptor, $0.name, O_RDONLY | O_CLOEXEC) } ?? open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileSystemError(operation: "read", path: path, code: errno) }
        defer { close(descriptor) }
        // One byte more than the file is thought to hold: a read that fills the buffer had more to give.
        var knownSize = 0
        if let expectedSize, expectedSize > 0 {
            knownSize = Int(expectedSize)
        } else if expectedSize == nil {
            var status = stat()
            if fstat(descriptor, &status) == 0, status.st_size > 0 { knownSize = Int(status.st_size) }
        }
        let capacity = knownSize > 0 ? knownSize + 1 : 4096
        var bytes = [UInt8](repeating: 0, count: capacity)
        var count = 0
        while true {
            if count == bytes.count { bytes.append(contentsOf: repeatElement(0, count: bytes.count)) }
            // The buffer is never empty (it grows before it is full): a missing base ends the read like an end of file.
            let asked = bytes.count - count
            let result = bytes.withUnsafeMutableBytes { buffer in
                guard let base = buffer.baseAddress else { return 0 }
                return read(descriptor, base + count, asked)
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(operation: "read", path: path, code: errno)
            }
            count += result
            // A file of a known size whose read came back short once that size was read is at its end (a local
            // file is read whole, short of a signal, which EINTR reports): no second call to learn that. Files
            // that tell no size (/proc's, pipes) are read until a read gives nothing.
            if result == 0 || (knownSize > 0 && count >= knownSize && result < asked) { break }
        }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// The status of `path`, or `nil` when nothing is there.
    package static func status(_ path: String) throws -> Status? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw FileSystemError(operation: "inspect", path: path, code: errno)
        }
        return Status(info)
    }

    /// `true` when something exists at `path`.
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The names in the directory at `path` (without `.` and `..`), each with its status. An absent
    /// directory lists as empty.
    package static func listDirectory(_ path: String) throws -> [(name: String, status: Status)] {
        var entries: [(name: String, status: Status)] = []
        try forEachName(inDirectory: path) { descriptor, name in
            var info = stat()
            guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno == ENOENT { return }
                throw FileSystemError(operation: "inspect", path: path + "/" + name, code: errno)
            }
            entries.append((name, Status(info)))
        }
        return entries
    }

    /// The names in the directory at `path` (without `.` and `..`), without reading each entry's status.
    /// An absent directory lists as empty.
    static func listNames(_ path: String) throws -> [String] {
        var names: [String] = []
        try forEachName(inDirectory: path) { _, name in names.append(name) }
        return names
    }

    /// Calls `body` with the directory's descriptor and each name in it but `.` and `..`; an absent directory has none.
    private static func forEachName(
        inDirectory path: String, _ body: (_ descriptor: Int32, _ name: String) throws -> Void
    ) throws {
        try forEachEntry(inDirectory: path) { descriptor, name in try body(descriptor, String(cString: name)) }
    }

    /// Calls `body` with the directory's descriptor and each name in it but `.` and `..`, as the C string
    /// `readdir` gave (valid during the call); an absent directory has none.
    static func forEachEntry(
        inDirectory path: String, _ body: (_ descriptor: Int32, _ name: UnsafePointer<CChar>) throws -> Void
    ) throws {
        guard let directory = opendir(path) else {
            if errno == ENOENT { return }
            throw FileSystemError(operation: "list", path: path, code: errno)
        }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        // The name is read where `readdir` put it: an entry is only as long as its name, so copying `d_name` (a
        // 256-byte field) could read past the end of `readdir`'s buffer, into memory that is not mapped.
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        let dot = CChar(UInt8(ascii: "."))
        while let entry = readdir(directory) {
            let name = (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self)
            if name[0] == dot && (name[1] == 0 || (name[1] == dot && name[2] == 0)) { continue }
            try body(descriptor, name)
        }
    }

    /// Creates the directory at `path` and any missing parents.
    package static func createDirectory(_ path: String) throws {
        let fault = FaultPoint.enter(.createDirectory, path)
        defer { fault.leave() }
        if let code = fault.error { throw FileSystemError(operation: "create directory", path: path, code: code) }
        try createDirectoryAndParents(path)
    }

    private static func createDirectoryAndParents(_ path: String) throws {
        if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
        if errno == ENOENT {
            let parent = parentDirectory(of: path)
            if parent != path {
                try createDirectoryAndParents(parent)
                if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
            }
        }
        throw FileSystemError(operation: "create directory", path: path, code: errno)
    }

    /// Writes `bytes` to a new file at `path`, which must not exist, without syncing it.
    static func writeNewFile(_ path: String, _ bytes: [UInt8]) throws {
        let fault = FaultPoint.enter(.write, path)
        defer { fault.leave() }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileSystemError(operation: "write", path: path, code: errno) }
        var failure = writeAll(bytes, to: descriptor, path: path, operation: "write", failingWith: fault.error)
        if close(descriptor) != 0, failure == nil {
            failure = FileSystemError(operation: "write", path: path, code: errno)
        }
        if let failure {
            unlink(path)
            throw failure
        }
    }

    /// Writes `bytes` over the existing file at `path` (a spare, see ``SpareFiles``) and cuts it to their
    /// length, without syncing it: its blocks are reused instead of allocated.
    static func overwriteFile(_ path: String, _ bytes: [UInt8]) throws {
        let fault = FaultPoint.enter(.write, path)
        defer { fault.leave() }
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileSystemError(operation: "write", path: path, code: errno) }
        var failure = writeAll(bytes, to: descriptor, path: path, operation: "write", failingWith: fault.error)
        if failure == nil {
            // Cut only an older content that was longer: ext4 journals a truncation even to the same size, and
            // asking the size is the cheaper call.
            let size = lseek(descriptor, 0, SEEK_END)
            if size < 0 || (size > off_t(bytes.count) && ftruncate(descriptor, off_t(bytes.count)) != 0) {
                failure = FileSystemError(operation: "write", path: path, code: errno)
            }
        }
        if close(descriptor) != 0, failure == nil {
            failure = FileSystemError(operation: "write", path: path, code: errno)
        }
        if let failure { throw failure }
    }

    /// Appends `bytes` to the file at `path` (creating it) and syncs it to disk. When the append or the sync
    /// fails, the file is cut back to its old length, so a full disk never leaves half a line that the next
    /// append would run on from.
    package static func appendAndSync(_ path: String, _ bytes: [UInt8]) throws {
        let fault = FaultPoint.enter(.append, path)
        defer { fault.leave() }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileSystemError(operation: "append to", path: path, code: errno) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw FileSystemError(operation: "append to", path: path, code: errno)
        }
        var failure = writeAll(bytes, to: descriptor, path: path, operation: "append to", failingWith: fault.error)
        if failure == nil {
            let syncFault = FaultPoint.enter(.sync, path, changesDisk: false)
            if let code = syncFault.error ?? (fsync(descriptor) == 0 ? nil : errno) {
                failure = FileSystemError(operation: "sync", path: path, code: code)
            }
        }
        if let failure {
            _ = ftruncate(descriptor, info.st_size)
            throw failure
        }
    }

    /// Writes all of `bytes` to `descriptor`, retrying short and interrupted writes; the error if one failed.
    /// `failingWith` (the fault hook of debug builds) writes half of `bytes`, then fails as a full disk does.
    static func writeAll(
        _ bytes: [UInt8], to descriptor: Int32, path: String, operation: String,
        failingWith injected: Int32? = nil
    ) -> FileSystemError? {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            let limit = injected == nil ? buffer.count : buffer.count / 2
            while offset < limit, let base = buffer.baseAddress {
                let written = write(descriptor, base + offset, limit - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return FileSystemError(operation: operation, path: path, code: errno)
                }
                offset += written
            }
            return injected.map { FileSystemError(operation: operation, path: path, code: $0) }
        }
    }

    /// Syncs the file or directory at `path` to disk.
    package static func sync(_ path: String) throws {
        let fault = FaultPoint.enter(.sync, path)
        defer { fault.leave() }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileSystemError(operation: "sync", path: path, code: errno) }
        defer { close(descriptor) }
        if let code = fault.error { throw FileSystemError(operation: "sync", path: path, code: code) }
        guard fsync(descriptor) == 0 else { throw FileSystemError(operation: "sync", path: path, code: errno) }
    }

    /// Makes every file written so far on the file system holding `path` durable with one call where the
    /// platform has one (`syncfs` on Linux); returns `false` when the caller must sync files one by one.
    static func syncWholeFileSystem(containing path: String) throws -> Bool {
        #if os(Linux)
        let fault = FaultPoint.enter(.sync, path)
        defer { fault.leave() }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileSystemError(operation: "sync", path: path, code: errno) }
        defer { close(descriptor) }
        if let code = fault.error { throw FileSystemError(operation: "sync", path: path, code: code) }
        guard tablesync_syncfs(descriptor) == 0 else {
            throw FileSystemError(operation: "sync", path: path, code: errno)
        }
        return true
        #else
        return false
        #endif
    }

    /// The error of a failed rename of `source` to `destination`, naming both.
    private static func renameFailure(_ source: String, _ destination: String, code: Int32) -> FileSystemError {
        FileSystemError(operation: "rename", path: "\(source) to \(destination)", code: code)
    }

    /// Renames `source` to `destination`, replacing it atomically.
    static func rename(_ source: String, to destination: String) throws {
        let fault = FaultPoint.enter(.rename, destination)
        defer { fault.leave() }
        if let code = fault.error { throw renameFailure(source, destination, code: code) }
        guard Glibc_rename(source, destination) == 0 else {
            throw renameFailure(source, destination, code: errno)
        }
    }

    /// Puts the file at `source` in place at `destination` atomically, as ``rename(_:to:)`` does, but when
    /// `destination` exists it swaps the two (`renameat2` with `RENAME_EXCHANGE` on Linux), so the old content
    /// keeps a name at `source` and is not freed during the call. Returns `true` when `source` now holds the old
    /// content, `false` when there was none (or the platform cannot swap, and the old content is gone).
    static func replace(_ source: String, at destination: String) throws -> Bool {
        let fault = FaultPoint.enter(.rename, destination)
        defer { fault.leave() }
        if let code = fault.error { throw renameFailure(source, destination, code: code) }
        #if os(Linux)
        if tablesync_renameat2(AT_FDCWD, source, AT_FDCWD, destination, TABLESYNC_RENAME_EXCHANGE) == 0 { return true }
        // ENOENT: nothing at the destination yet; EINVAL: a file system that cannot exchange. A plain rename does.
        guard errno == ENOENT || errno == EINVAL || errno == ENOSYS else {
            throw renameFailure(source, destination, code: errno)
        }
        #endif
        guard Glibc_rename(source, destination) == 0 else {
            throw renameFailure(source, destination, code: errno)
        }
        return false
    }

    /// Puts the file at `source` in place at `destination` only if nothing is there, atomically (`renameat2`
    /// with `RENAME_NOREPLACE` on Linux); returns `false`, leaving both as they are, when a file is there. Where
    /// the platform or file system cannot do that in one call, it looks and then renames, and a file made in
    /// between is replaced.
    static func place(_ source: String, atAbsent destination: String) throws -> Bool {
        let fault = FaultPoint.enter(.rename, destination)
        defer { fault.leave() }
        if let code = fault.error { throw renameFailure(source, destination, code: code) }
        #if os(Linux)
        if tablesync_renameat2(AT_FDCWD, source, AT_FDCWD, destination, TABLESYNC_RENAME_NOREPLACE) == 0 { return true }
        if errno == EEXIST { return false }
        guard errno == EINVAL || errno == ENOSYS else {
            throw renameFailure(source, destination, code: errno)
        }
        #endif
        if exists(destination) { return false }
        guard Glibc_rename(source, destination) == 0 else {
            throw renameFailure(source, destination, code: errno)
        }
        return true
    }

    /// Moves the file at `path` to `aside` (on the same file system), so that it is gone from `path` without
    /// being freed; returns `false` when nothing was at `path`.
    static func moveAside(_ path: String, to aside: String) throws -> Bool {
        let fault = FaultPoint.enter(.remove, path)
        defer { fault.leave() }
        if let code = fault.error { throw FileSystemError(operation: "remove", path: path, code: code) }
        guard Glibc_rename(path, aside) == 0 else {
            if errno == ENOENT { return false }
            throw FileSystemError(operation: "remove", path: path, code: errno)
        }
        return true
    }

    /// Removes the file at `path`; an absent file is not an error.
    package static func removeFile(_ path: String) throws {
        let fault = FaultPoint.enter(.remove, path)
        defer { fault.leave() }
        if let code = fault.error { throw FileSystemError(operation: "remove", path: path, code: code) }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw FileSystemError(operation: "remove", path: path, code: errno)
        }
    }

    /// Removes the directory at `path` when it is empty; returns whether it did.
    @discardableResult
    package static func removeEmptyDirectory(_ path: String) -> Bool {
        let fault = FaultPoint.enter(.remove, path)
        defer { fault.leave() }
        return fault.error == nil && rmdir(path) == 0
    }

    /// The clock the kernel stamps file modification and change times with, in nanoseconds since 1970
    /// (`CLOCK_REALTIME_COARSE` on Linux): a file changed after this reading gets a time no earlier than it.
    /// Taken a tick back, so that a time stamped within the same tick counts as later.
    static func timestampClockNanoseconds() -> Int64 {
        var now = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        var resolution = timespec()
        clock_getres(CLOCK_REALTIME_COARSE, &resolution)
        let tick = Int64(resolution.tv_sec) * 1_000_000_000 + Int64(resolution.tv_nsec)
        #else
        clock_gettime(CLOCK_REALTIME, &now)
        let tick: Int64 = 1_000_000
        #endif
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) - tick
    }

    /// The directory part of `path`.
    package static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// The last component of `path`.
    static func lastComponent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}

private func Glibc_rename(_ source: String, _ destination: String) -> Int32 {
    #if canImport(Glibc)
    return Glibc.rename(source, destination)
    #else
    return Darwin.rename(source, destination)
    #endif
}

extension FileSystem.Status {
    init(_ info: stat) {
        #if canImport(Darwin)
        let modified = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        let changed = Int64(info.st_ctimespec.tv_sec) * 1_000_000_000 + Int64(info.st_ctimespec.tv_nsec)
        #else
        let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        let changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        #endif
        let type = info.st_mode & S_IFMT
        self.init(
            size: Int64(info.st_size), modifiedNanoseconds: modified, changedNanoseconds: changed,
            inode: UInt64(info.st_ino), isDirectory: type == S_IFDIR, isRegularFile: type == S_IFREG)
    }
}
