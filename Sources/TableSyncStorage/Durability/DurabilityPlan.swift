#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a ``DurableFileBatch`` makes its new files durable before it renames them into place: one `syncfs` of the
/// whole file system, or one `fsync` per file. Both are crash-safe; they differ in whom they wait for.
///
/// `syncfs` writes out every dirty page of the file system, whoever wrote it. On a quiet machine that is the batch
/// itself, and one call is far cheaper than a call per file. On a busy one (a database, a build, a copy) it waits for
/// the other programs' data too, where an `fsync` per file does not. So the batch looks at how much data the system
/// holds unwritten, less its own, and syncs file by file when that exceeds ``strangerBytesPerFile`` per file of the
/// batch: about the point where waiting for others' data costs as much as one more `fsync` (docs/bench.md, "Figures
/// behind the code").
enum DurabilityPlan: Equatable, Sendable {
    /// One `syncfs` for the whole batch.
    case wholeFileSystem
    /// One `fsync` per new file.
    case eachFile

    /// Other programs' unwritten data per file of the batch above which ``eachFile`` is cheaper: 512 KiB.
    static let strangerBytesPerFile = 512 * 1024

    /// The plan for a batch of `files` new files holding `batchBytes` bytes, when the system holds
    /// `systemUnwrittenBytes` of dirty or in-flight data (`nil`: unknown), which is read only for batches of
    /// more than two files: most batches are one record file and its journal line.
    static func choose(files: Int, batchBytes: Int, systemUnwrittenBytes: @autoclosure () -> Int?) -> DurabilityPlan {
        // Two files cost two calls either way; `syncfs` could only add others' data.
        guard files > 2 else { return .eachFile }
        guard let systemUnwrittenBytes = systemUnwrittenBytes() else { return .wholeFileSystem }
        let strangers = max(0, systemUnwrittenBytes - batchBytes)
        return strangers > files * strangerBytesPerFile ? .eachFile : .wholeFileSystem
    }

    /// The plan for this batch on this machine, as ``DurabilitySetting`` asks: by default Linux's `Dirty` +
    /// `Writeback` from `/proc/meminfo` decide (all file systems together, so it can only err towards ``eachFile``,
    /// which is always safe).
    static func current(files: Int, batchBytes: Int, setting: DurabilitySetting) -> DurabilityPlan {
        #if os(Linux)
        switch setting {
        case .automatic:
            return choose(files: files, batchBytes: batchBytes, systemUnwrittenBytes: SystemMemory.unwrittenBytes())
        case .syncfs: return .wholeFileSystem
        case .fsync: return .eachFile
        }
        #else
        // No `syncfs` elsewhere.
        return .eachFile
        #endif
    }
}

/// `TABLESYNC_DURABILITY`: how durable batches sync. `auto` (or unset) lets ``DurabilityPlan`` decide batch by batch;
/// `syncfs` and `fsync` fix one way, for a host known to be always busy (`fsync`) or a run whose file-system calls
/// must be the same every time (the disk-fault tests count them). Either way is crash-safe.
enum DurabilitySetting: String, CaseIterable, Sendable {
    case automatic = "auto"
    case syncfs
    case fsync

    static let variable = "TABLESYNC_DURABILITY"

    /// The process's setting, read once; a value not understood fails the first durable write, naming it.
    static let configured: Result<DurabilitySetting, StoreError> = parse(getenv(variable).map { String(cString: $0) })

    static func parse(_ value: String?) -> Result<DurabilitySetting, StoreError> {
        guard let value, !value.isEmpty else { return .success(.automatic) }
        guard let setting = DurabilitySetting(rawValue: value) else {
            return .failure(.invalidEnvironment(variable: variable, value: value, accepted: allCases.map(\.rawValue)))
        }
        return .success(setting)
    }
}

/// Figures of the kernel's page cache (also read by the benchmarks, which load the disk on purpose).
package enum SystemMemory {
    /// `Dirty` + `Writeback` of `/proc/meminfo` in bytes, or `nil` when it cannot be read (not Linux, no /proc).
    /// One `read` of a small virtual file: a few microseconds.
    package static func unwrittenBytes() -> Int? {
        let descriptor = open("/proc/meminfo", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 8192)
        let count = buffer.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress else { return 0 }
            return read(descriptor, base, bytes.count)
        }
        guard count > 0 else { return nil }
        return unwrittenBytes(meminfo: String(decoding: buffer[..<count], as: UTF8.self))
    }

    /// `Dirty` + `Writeback` of a `/proc/meminfo` text (lines like `Dirty:   1234 kB`), or `nil` without them.
    static func unwrittenBytes(meminfo: String) -> Int? {
        var total = 0
        var found = 0
        for line in meminfo.split(separator: "\n") where line.hasPrefix("Dirty:") || line.hasPrefix("Writeback:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, let value = Int(fields[1]) else { return nil }
            total += value * (fields.count >= 3 && fields[2] == "kB" ? 1024 : 1)
            found += 1
        }
        return found == 2 ? total : nil
    }
}
