import Dispatch
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files whose contents nobody needs any more, kept under temporary names to be written over instead of
/// freed: the old contents of record files that a ``DurableFileBatch`` replaced, and records it removed.
///
/// Replacing 10,000 record files by creating 10,000 new ones and freeing the old ones made the file system do
/// the expensive part of a write-back: ext4 mounted with `discard` (common on cloud machines) discards freed
/// blocks inside the `rename` or `unlink` that frees them, and ext4 without a journal scans past every
/// recently freed inode when it allocates one. A batch that writes its new contents into the spares of the
/// previous batch, swaps them in, and keeps the files it swapped out as the next spares allocates and frees
/// almost nothing. Spares beyond ``limit`` and those left when the run ends are removed on a thread of their
/// own, so that freeing them overlaps the rest of the run.
///
/// Only garbage lives here: a spare left behind by a crash is a temporary file, which the next read-write open
/// removes. Removing spares is not a fault point (``FaultPoint``): it runs beside the run's own calls, and its
/// failure loses nothing.
final class SpareFiles: Sendable {
    /// The most spares kept; more are removed.
    let limit: Int
    private let spares = NIOLockedValueBox<[String]>([])
    private let queue = DispatchQueue(label: "tablesync.spare-files")
    private let group = DispatchGroup()

    init(limit: Int = 4096) {
        self.limit = limit
    }

    /// A spare to write over, if there is one; it is the caller's until it gives it back with ``keep(_:)``.
    func take() -> String? {
        spares.withLockedValue { $0.popLast() }
    }

    /// Keeps `paths` as spares; what goes beyond ``limit`` is removed beside the run.
    func keep(_ paths: [String]) {
        let excess: [String] = spares.withLockedValue { spares in
            spares.append(contentsOf: paths)
            guard spares.count > limit else { return [] }
            defer { spares.removeFirst(spares.count - limit) }
            return Array(spares[..<(spares.count - limit)])
        }
        remove(excess)
    }

    /// Removes every spare, and returns when all removals handed over so far are done.
    func removeAll() async {
        removeEverySpare()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: queue) { continuation.resume() }
        }
    }

    /// ``removeAll()`` for callers that cannot wait asynchronously (a context closing, or going away).
    func removeAllBlocking() {
        removeEverySpare()
        group.wait()
    }

    private func removeEverySpare() {
        remove(spares.withLockedValue { spares in
            defer { spares.removeAll() }
            return spares
        })
    }

    private func remove(_ paths: [String]) {
        guard !paths.isEmpty else { return }
        queue.async(group: group) {
            for path in paths { unlink(path) }
        }
    }
}
