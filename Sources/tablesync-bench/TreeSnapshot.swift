#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `stat` identity of every file under a directory, to count the files a command wrote: a file
/// rewritten, even with the same bytes, gets a new `ctime` (and a new inode when renamed into place).
struct TreeSnapshot {
    struct Identity: Equatable {
        var size: Int64
        var modified: Int64
        var changed: Int64
        var inode: UInt64
    }

    private(set) var files: [String: Identity] = [:]

    /// Every regular file under `root`, by path relative to it, leaving out the top-level directories named in
    /// `excluding`.
    init(root: String, excluding: Set<String> = []) {
        walk(root, relative: "", excluding: excluding)
    }

    /// The relative paths written, created or removed between `self` and `later`.
    func changedFiles(comparedWith later: TreeSnapshot) -> [String] {
        var changed = later.files.filter { files[$0.key] != $0.value }.map(\.key)
        changed += files.keys.filter { later.files[$0] == nil }
        return changed.sorted()
    }

    private mutating func walk(_ directory: String, relative: String, excluding: Set<String>) {
        guard let handle = opendir(directory) else { return }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name == "." || name == ".." || (relative.isEmpty && excluding.contains(name)) { continue }
            let path = directory + "/" + name
            let relativePath = relative.isEmpty ? name : relative + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFDIR {
                walk(path, relative: relativePath, excluding: excluding)
            } else {
                files[relativePath] = Identity(info)
            }
        }
    }
}

extension TreeSnapshot.Identity {
    /// The identity of the file at `path` now, or `nil` when there is none.
    init?(path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    init(_ info: stat) {
        #if canImport(Darwin)
        let modified = info.st_mtimespec
        let changed = info.st_ctimespec
        #else
        let modified = info.st_mtim
        let changed = info.st_ctim
        #endif
        self.init(
            size: Int64(info.st_size),
            modified: Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec),
            changed: Int64(changed.tv_sec) * 1_000_000_000 + Int64(changed.tv_nsec),
            inode: UInt64(info.st_ino))
    }
}
