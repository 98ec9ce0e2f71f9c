/// A set of file writes and removals made durable together: the cheap way to be crash-safe.
///
/// ``commit(temporaryDirectory:)`` writes every new content to a temporary file, makes them all durable at
/// once (one `syncfs` on Linux, else one `fsync` per file), renames each over its destination (atomic:
/// a reader sees the old or the new file, never a torn one), removes the files to remove, and finally syncs
/// each directory touched so the renames and removals survive a power cut. A crash at any point leaves every
/// destination either old or new, plus temporary files that ``StoreRecovery`` deletes.
struct DurableFileBatch {
    private(set) var writes: [(path: String, bytes: [UInt8])] = []
    private(set) var removals: [String] = []

    /// `true` when there is nothing to commit.
    var isEmpty: Bool { writes.isEmpty && removals.isEmpty }

    /// Adds a file to (re)write with `bytes`.
    mutating func write(_ bytes: [UInt8], to path: String) { writes.append((path, bytes)) }

    /// Adds a file to remove.
    mutating func remove(_ path: String) { removals.append(path) }

    /// Makes every write and removal durable; see the type's documentation for the order of steps.
    ///
    /// With `spares`, new contents are written over spare files instead of new ones, a replaced file's old
    /// content is swapped out to the temporary name, a removed file is moved aside, and both become spares once
    /// the directories are synced (see ``SpareFiles`` for why). Without, old contents are freed here.
    func commit(temporaryDirectory: String, spares: SpareFiles? = nil) throws {
        if isEmpty { return }
        try FileSystem.createDirectory(temporaryDirectory)
        let prefix = temporaryDirectory + "/" + TemporaryName.prefix + TemporaryName.unique()
        var temporaryPaths: [String] = []
        temporaryPaths.reserveCapacity(writes.count)
        do {
            for (index, write) in writes.enumerated() {
                if let spare = spares?.take() {
                    temporaryPaths.append(spare)
                    try FileSystem.overwriteFile(spare, write.bytes)
                } else {
                    let temporaryPath = "\(prefix)-\(index)"
                    try FileSystem.writeNewFile(temporaryPath, write.bytes)
                    temporaryPaths.append(temporaryPath)
                }
            }
            if !writes.isEmpty {
                let syncedAtOnce = try writes.count > 2 && FileSystem.syncWholeFileSystem(containing: temporaryDirectory)
                if !syncedAtOnce {
                    for path in temporaryPaths { try FileSystem.sync(path) }
                }
            }
        } catch {
            for path in temporaryPaths { try? FileSystem.removeFile(path) }
            throw error
        }
        var directories = Set<String>()
        var swappedOut: [String] = []
        for (index, write) in writes.enumerated() {
            if spares != nil {
                if try FileSystem.replace(temporaryPaths[index], at: write.path) { swappedOut.append(temporaryPaths[index]) }
            } else {
                try FileSystem.rename(temporaryPaths[index], to: write.path)
            }
            directories.insert(FileSystem.parentDirectory(of: write.path))
        }
        for (index, path) in removals.enumerated() {
            if spares != nil {
                let aside = "\(prefix)-removed-\(index)"
                if try FileSystem.moveAside(path, to: aside) { swappedOut.append(aside) }
            } else {
                try FileSystem.removeFile(path)
            }
            directories.insert(FileSystem.parentDirectory(of: path))
        }
        // The swapped-out names live in the temporary directory: synced too, so no later write over a spare can
        // overtake the swap that made it one.
        if !swappedOut.isEmpty { directories.insert(temporaryDirectory) }
        for directory in directories.sorted() { try FileSystem.sync(directory) }
        spares?.keep(swappedOut)
    }
}

/// Names of temporary files: recognisable so that recovery can delete exactly them.
enum TemporaryName {
    /// Every temporary file of the store starts with this.
    static let prefix = "tmp-"

    /// A name part that no other process or earlier run uses.
    static func unique() -> String {
        "\(getpidValue())-\(UInt64.random(in: 0...UInt64.max))"
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private func getpidValue() -> Int32 { getpid() }
