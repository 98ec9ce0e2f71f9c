import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files whose contents nobody needs any more, kept in `.tablesync/spares/` to be written over instead of
/// freed: the old contents of record files that a ``DurableFileBatch`` replaced, and records it removed.
///
/// Replacing 10,000 record files by creating 10,000 new ones and freeing the old ones made the file system do
/// the expensive part of a write-back: ext4 mounted with `discard` (common on cloud machines) discards freed
/// blocks inside the `rename` or `unlink` that frees them, and ext4 without a journal scans past every
/// recently freed inode when it allocates one. A batch that writes its new contents into spares, swaps them in,
/// and keeps the files it swapped out as the next spares allocates and frees almost nothing.
///
/// Spares outlive the run: when a push, pull or sync ends, up to ``retainedCount`` small ones stay on disk for
/// the next run (a cron job's next sync then creates no file for its first write-backs either) and the rest are
/// removed on a thread of their own. The next run lists them only when it first needs a spare: a sync that finds
/// nothing to write looks at none of them. A spare is garbage at every moment — a crash can leave one half-written,
/// which is harmless — so nothing about them needs recovering. They do hold old record contents until written
/// over; `purge` removes them all.
///
/// Removing spares is not a fault point (``FaultPoint``): it runs beside the run's own calls, and its failure
/// loses nothing.
///
/// Spares live in two directories, ``directory`` and ``alternateDirectory``: staged batches (``stagingBatch()``)
/// create their new files in each in turn. Creating a file and renaming one out of a directory both take that
/// directory's lock, so a pull that stages page N+1 while it renames page N's files out of the same directory makes
/// the two take turns; in two directories they overlap (docs/bench.md, *Figures behind the code*).
package final class SpareFiles: Sendable {
    /// Where spares live (`.tablesync/spares/`), on the store's file system so that they can be swapped in; the
    /// new files of a batch that is not staged go here.
    let directory: String
    /// The second directory of spares (`.tablesync/spares/alternate/`), which every other staged batch creates its
    /// new files in.
    let alternateDirectory: String
    /// The most spares kept during a run; more are removed.
    let limit: Int
    /// The most spares kept on disk between runs, and the largest of them (a bigger one is removed).
    let retainedCount: Int
    let retainedMaximumSize: Int64
    private let pool: Mutex<Pool>
    /// Staged batches so far: which directory the next one creates its files in.
    private let stagedBatches = Atomic<Int>(0)
    private let queue = DispatchQueue(label: "tablesync.spare-files")
    private let group = DispatchGroup()

    /// Every spare file starts with this.
    static let namePrefix = "spare-"
    /// The name of ``alternateDirectory`` inside ``directory``.
    static let alternateDirectoryName = "alternate"

    /// The files of one batch that need a new spare: their names and the directory they are made in.
    struct Batch: Sendable {
        /// A name part no other batch uses (``TemporaryName/unique()``).
        let name: String
        /// ``SpareFiles/directory`` or ``SpareFiles/alternateDirectory``.
        let directory: String
    }

    /// A spare file, with its size when known: what it held when it was swapped out or listed.
    struct Spare {
        let path: String
        let size: Int64?
    }

    /// The spares at hand, and whether those an earlier run kept are among them yet.
    private struct Pool {
        var spares: [Spare] = []
        /// Whether the spares an earlier run left on disk have been listed into ``spares`` (or there are none to take).
        var adopted: Bool
        /// Whether a spare was taken or kept since the run began or was last trimmed.
        var touched = false
    }

    /// With `adoptingRetained`, the spares an earlier run kept are taken over when first needed (beyond ``limit``,
    /// they are removed): for the store's writer only, which holds the lock, so no other process uses them.
    package init(
        directory: String, adoptingRetained: Bool = false, limit: Int = 4096, retainedCount: Int = 1024,
        retainedMaximumSize: Int64 = 64 * 1024
    ) {
        self.directory = directory
        alternateDirectory = directory + "/" + Self.alternateDirectoryName
        self.limit = limit
        self.retainedCount = retainedCount
        self.retainedMaximumSize = retainedMaximumSize
        pool = Mutex(Pool(adopted: !adoptingRetained))
    }

    /// Lists the spares an earlier run kept into `pool`, once. A listing that fails adopts none: spares are only
    /// a saving, and a store whose `.tablesync/` cannot be listed fails on its next real write anyway.
    private func adoptIfNeeded(_ pool: inout Pool) {
        guard !pool.adopted else { return }
        pool.adopted = true
        let found = [directory, alternateDirectory].flatMap { spares in
            ((try? FileSystem.listDirectory(spares)) ?? []).filter {
                $0.name.hasPrefix(Self.namePrefix) && $0.status.isRegularFile
            }
            .map { Spare(path: spares + "/" + $0.name, size: $0.status.size) }
        }
        pool.spares.insert(contentsOf: found, at: 0)
        removeBeyondLimit(&pool)
    }

    /// A batch whose new files go into ``directory``: that of a ``DurableFileBatch`` whose writes were not staged.
    func batch(named name: String) -> Batch {
        Batch(name: name, directory: directory)
    }

    /// A batch of staged files: each such batch makes its new files in the other directory than the one before it
    /// (see the type's documentation), created here if need be.
    func stagingBatch() throws -> Batch {
        let alternate = stagedBatches.add(1, ordering: .relaxed).oldValue % 2 == 1
        let batch = Batch(name: TemporaryName.unique(), directory: alternate ? alternateDirectory : directory)
        try FileSystem.createDirectory(batch.directory)
        return batch
    }

    /// The directories of spares that `paths` (spares) lie in: those to sync once names were swapped into them.
    func directories(holding paths: [String]) -> [String] {
        let alternatePrefix = alternateDirectory + "/"
        var inMain = false
        var inAlternate = false
        for path in paths {
            if path.utf8.starts(with: alternatePrefix.utf8) { inAlternate = true } else { inMain = true }
            if inMain && inAlternate { break }
        }
        return (inMain ? [directory] : []) + (inAlternate ? [alternateDirectory] : [])
    }

    /// Removes the oldest spares beyond ``limit`` (beside the run).
    private func removeBeyondLimit(_ pool: inout Pool) {
        guard pool.spares.count > limit else { return }
        let excess = pool.spares[..<(pool.spares.count - limit)].map(\.path)
        pool.spares.removeFirst(excess.count)
        remove(excess)
    }

    /// The path for a new file that becomes a spare once swapped out; `index` tells apart those of one batch.
    func newSparePath(batch: Batch, index: Int) -> String {
        "\(batch.directory)/\(Self.namePrefix)\(batch.name)-\(index)"
    }

    /// How many of the latest spares ``take(toHold:)`` looks through for one that needs no cutting.
    static let choices = 16

    /// A spare to write `count` bytes over, if there is one; it is the caller's until it gives it back with
    /// ``keep(_:)``. Of the ``choices`` latest spares, the longest known to be no longer than `count` bytes, so that
    /// shorter ones stay for shorter contents; the latest when none is known to be: a spare longer than its new
    /// content must be cut to size after the write, a call that costs as much as the write itself on ext4, where
    /// writing past a shorter one's end costs nothing more.
    private func take(toHold count: Int) -> String? {
        pool.withLock { pool in
            adoptIfNeeded(&pool)
            pool.touched = true
            var fitting: (index: Int, size: Int64)?
            for index in pool.spares.indices.reversed().prefix(Self.choices) {
                guard let size = pool.spares[index].size, size <= count, size > fitting?.size ?? -1 else { continue }
                fitting = (index, size)
            }
            return fitting.map { pool.spares.remove(at: $0.index).path } ?? pool.spares.popLast()?.path
        }
    }

    /// Takes a spare and writes `bytes` over it; `nil` when there is none left. It is the caller's until it gives
    /// it back with ``keep(_:)``. A spare that is gone (removed by hand between runs) is dropped for the next one;
    /// any other failure is the caller's, and the spare stays a spare.
    func takeExisting(writing bytes: [UInt8]) throws -> String? {
        while let spare = take(toHold: bytes.count) {
            do {
                try FileSystem.overwriteFile(spare, bytes)
                return spare
            } catch let error as FileSystemError where error.isNotFound {
                continue
            } catch {
                keep([spare])
                throw error
            }
        }
        return nil
    }

    /// A spare holding `bytes`: one written over, or a new file (named after `batch` and `index`, in the batch's
    /// directory) when none is left. It is the caller's until it gives it back with ``keep(_:)``.
    func write(_ bytes: [UInt8], batch: Batch, index: Int) throws -> String {
        if let spare = try takeExisting(writing: bytes) { return spare }
        let path = newSparePath(batch: batch, index: index)
        try FileSystem.writeNewFile(path, bytes)
        return path
    }

    /// Keeps `paths` as spares, their sizes unknown; what goes beyond ``limit`` is removed beside the run.
    func keep(_ paths: [String]) {
        keep(paths.map { Spare(path: $0, size: nil) })
    }

    /// Keeps `spares`; what goes beyond ``limit`` is removed beside the run.
    func keep(_ spares: [Spare]) {
        guard !spares.isEmpty else { return }
        pool.withLock { pool in
            pool.touched = true
            pool.spares.append(contentsOf: spares)
            removeBeyondLimit(&pool)
        }
    }

    /// Ends a run: keeps up to ``retainedCount`` spares no bigger than ``retainedMaximumSize`` for the next run,
    /// removes the others, and returns when the removals are done.
    package func finishRun() async {
        trimToRetained()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: queue) { continuation.resume() }
        }
    }

    /// ``finishRun()`` for callers that cannot wait asynchronously (a context closing, or going away).
    package func finishRunBlocking() {
        trimToRetained()
        group.wait()
    }

    /// Removes every spare, on disk too (a purge: no old record content may stay behind), and waits for it.
    package func removeAll() throws {
        pool.withLock { pool in
            pool.spares.removeAll()
            pool.adopted = true
            pool.touched = false
        }
        group.wait()
        for spares in [directory, alternateDirectory] {
            for (name, status) in try FileSystem.listDirectory(spares)
            where name.hasPrefix(Self.namePrefix) && status.isRegularFile {
                try FileSystem.removeFile(spares + "/" + name)
            }
        }
    }

    /// Keeps up to ``retainedCount`` small spares and removes the rest; nothing to do for a run that neither took
    /// nor kept one since the last trim (what is on disk was trimmed before).
    private func trimToRetained() {
        let candidates: [Spare]? = pool.withLock { pool in
            guard pool.touched else { return nil }
            adoptIfNeeded(&pool)
            defer {
                pool.spares.removeAll()
                pool.touched = false
            }
            return pool.spares
        }
        guard let candidates else { return }
        var excess: [String] = []
        var retained: [Spare] = []
        for spare in candidates.reversed() {
            // A size not known is asked of the file; one known is what the file held when it became a spare.
            if retained.count < retainedCount,
                let size = spare.size ?? (try? FileSystem.status(spare.path))?.size, size <= retainedMaximumSize
            {
                retained.append(Spare(path: spare.path, size: size))
            } else {
                excess.append(spare.path)
            }
        }
        pool.withLock { $0.spares = retained.reversed() }
        remove(excess)
    }

    private func remove(_ paths: [String]) {
        guard !paths.isEmpty else { return }
        queue.async(group: group) {
            for path in paths { unlink(path) }
        }
    }
}
