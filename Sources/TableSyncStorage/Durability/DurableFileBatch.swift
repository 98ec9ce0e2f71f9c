/// A set of file writes and removals made durable together: the cheap way to be crash-safe.
///
/// ``commit(temporaryDirectory:)`` writes every new content to a temporary file, makes them all durable
/// (one `syncfs` on Linux, or one `fsync` per file when other programs' unwritten data would make `syncfs` wait:
/// ``DurabilityPlan``), renames each over its destination (atomic:
/// a reader sees the old or the new file, never a torn one), removes the files to remove, and finally syncs
/// each directory touched so the renames and removals survive a power cut. A crash at any point leaves every
/// destination either old or new, plus temporary files that ``StoreRecovery`` deletes.
package struct DurableFileBatch {
    /// One file to write.
    struct Write {
        var path: String
        var bytes: [UInt8]
        /// Put in place only where no file is (``DurableFileBatch/create(_:at:)``).
        var onlyIfAbsent: Bool
        /// A spare file that holds `bytes` already (written ahead: ``EncodedRecords/stage(in:)``), claimed by the
        /// commit and put in place instead of writing them again.
        var staged: StagedSpares.Slot?
        /// The size of the file at `path` when the caller looked, if it did: that of the spare the old content
        /// becomes once swapped out (``SpareFiles`` chooses spares by size).
        var replacedSize: Int64? = nil
    }

    private(set) var writes: [Write] = []
    private(set) var removals: [String] = []

    /// An empty batch.
    package init() {}

    /// `true` when there is nothing to commit.
    var isEmpty: Bool { writes.isEmpty && removals.isEmpty }

    /// Adds a file to (re)write with `bytes`; `replacedSize` is the size the caller found the file at, if it looked.
    package mutating func write(
        _ bytes: [UInt8], to path: String, staged: StagedSpares.Slot? = nil, replacedSize: Int64? = nil
    ) {
        writes.append(
            Write(path: path, bytes: bytes, onlyIfAbsent: false, staged: staged, replacedSize: replacedSize))
    }

    /// Adds a file to write where the caller found none: it is put in place only if there is still none, so a
    /// file made since (by a person, during a pull) is left as it is, and ``commit(temporaryDirectory:spares:)``
    /// returns its path. Costs one call where a replacing write of a new file tries a swap first.
    mutating func create(_ bytes: [UInt8], at path: String, staged: StagedSpares.Slot? = nil) {
        writes.append(Write(path: path, bytes: bytes, onlyIfAbsent: true, staged: staged))
    }

    /// Adds a file to remove.
    package mutating func remove(_ path: String) { removals.append(path) }

    /// Adds `other`'s writes and removals after this batch's.
    mutating func append(_ other: DurableFileBatch) {
        writes += other.writes
        removals += other.removals
    }

    /// Makes every write and removal durable; see the type's documentation for the order of steps.
    ///
    /// With `spares`, new contents are written over spare files (or new files among them) instead of new
    /// temporary files, a replaced file's old content is swapped out to the spare's name, a removed file is moved
    /// aside among the spares, and both become spares once the directories are synced (see ``SpareFiles`` for
    /// why). Without, old contents are freed here.
    ///
    /// Returns the paths of ``create(_:at:)`` writes that found a file in place and were not made.
    @discardableResult
    package func commit(temporaryDirectory: String, spares: SpareFiles? = nil) throws -> Set<String> {
        if isEmpty { return [] }
        // A setting not understood stops the batch before it writes anything.
        let setting = try DurabilitySetting.configured.get()
        let batch = TemporaryName.unique()
        let newFilePaths = try writeNewFiles(
            batch: batch, setting: setting, temporaryDirectory: temporaryDirectory, spares: spares)
        var placed = try place(newFilePaths, spares: spares)
        try remove(batch: batch, spares: spares, into: &placed)
        // The swapped-out names live among the spares: their directories are synced too, so no later write over a
        // spare can overtake the swap that made it one.
        if let spares { placed.directories.formUnion(spares.directories(holding: placed.swappedOut.map(\.path))) }
        for directory in placed.directories.sorted() { try FileSystem.sync(directory) }
        spares?.keep(placed.swappedOut)
        return placed.notPlaced
    }

    /// What renaming the new files into place left: the directories to sync, the names swapped out (spares now)
    /// and the paths a person's file kept.
    private struct Placement {
        var directories = Set<String>()
        var swappedOut: [SpareFiles.Spare] = []
        var notPlaced = Set<String>()
    }

    /// Writes the new files (into spares, or temporary files; staged spares are claimed) and makes them durable by
    /// the plan; returns their paths, in the order of ``writes``. On failure none is left behind: spares stay spares,
    /// temporary files go.
    private func writeNewFiles(
        batch: String, setting: DurabilitySetting, temporaryDirectory: String, spares: SpareFiles?
    ) throws -> [String] {
        let newFileDirectory = spares?.directory ?? temporaryDirectory
        try FileSystem.createDirectory(newFileDirectory)
        var newFilePaths: [String] = []
        newFilePaths.reserveCapacity(writes.count)
        let spareBatch = spares?.batch(named: batch)
        do {
            for (index, write) in writes.enumerated() {
                if let staged = write.staged?.claim() {
                    newFilePaths.append(staged)
                } else if let spares, let spareBatch {
                    newFilePaths.append(try spares.write(write.bytes, batch: spareBatch, index: index))
                } else {
                    let path = "\(temporaryDirectory)/\(TemporaryName.prefix)\(batch)-\(index)"
                    try FileSystem.writeNewFile(path, write.bytes)
                    newFilePaths.append(path)
                }
            }
            if !writes.isEmpty {
                // Planned once the batch's own files are written, so that their bytes are among those counted.
                let plan = DurabilityPlan.current(
                    files: writes.count, batchBytes: writes.reduce(0) { $0 + $1.bytes.count },
                    setting: setting)
                let syncedAtOnce =
                    try plan == .wholeFileSystem && FileSystem.syncWholeFileSystem(containing: newFileDirectory)
                if !syncedAtOnce {
                    for path in newFilePaths { try FileSystem.sync(path) }
                }
            }
        } catch {
            // Spares stay garbage whatever they hold; new temporary files go.
            if let spares {
                spares.keep(newFilePaths)
            } else {
                for path in newFilePaths { try? FileSystem.removeFile(path) }
            }
            throw error
        }
        return newFilePaths
    }

    /// Renames each new file into place: over the old file (swapping it out into the spares when there are spares),
    /// or only where none is.
    private func place(_ newFilePaths: [String], spares: SpareFiles?) throws -> Placement {
        var placed = Placement()
        for (index, write) in writes.enumerated() {
            if write.onlyIfAbsent {
                if try !FileSystem.place(newFilePaths[index], atAbsent: write.path) {
                    placed.notPlaced.insert(write.path)
                    // Never renamed, so never needed: a spare stays one, a temporary file goes.
                    if let spares {
                        spares.keep([newFilePaths[index]])
                    } else {
                        try FileSystem.removeFile(newFilePaths[index])
                    }
                }
            } else if spares != nil {
                if try FileSystem.replace(newFilePaths[index], at: write.path) {
                    placed.swappedOut.append(SpareFiles.Spare(path: newFilePaths[index], size: write.replacedSize))
                }
            } else {
                try FileSystem.rename(newFilePaths[index], to: write.path)
            }
            placed.directories.insert(FileSystem.parentDirectory(of: write.path))
        }
        return placed
    }

    /// Removes the files of ``removals``: moved aside into the spares when there are spares.
    private func remove(batch: String, spares: SpareFiles?, into placed: inout Placement) throws {
        let removedBatch = spares?.batch(named: batch + "-removed")
        for (index, path) in removals.enumerated() {
            if let spares, let removedBatch {
                let aside = spares.newSparePath(batch: removedBatch, index: index)
                if try FileSystem.moveAside(path, to: aside) {
                    placed.swappedOut.append(SpareFiles.Spare(path: aside, size: nil))
                }
            } else {
                try FileSystem.removeFile(path)
            }
            placed.directories.insert(FileSystem.parentDirectory(of: path))
        }
    }
}

/// Names of temporary files: recognisable so that recovery can delete exactly them.
package enum TemporaryName {
    /// Every temporary file of the store starts with this.
    package static let prefix = "tmp-"

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
