#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's single-writer lock: an exclusive `flock` on `.tablesync/lock`.
///
/// The operating system releases the lock when its holder exits, however it exits (a killed run leaves no
/// stale lock behind). The holder writes its process id and command into the file, so a second run can say
/// who holds it. Taking the lock waits only for a run of `tablesync watch` (``watchPurpose``), whose runs are short
/// and come back to back with nothing between them but waits for changes: for up to ``watchWait``. Anything else
/// holding the lock fails a second writer at once.
///
/// A `flock` belongs to the open file description, not to the descriptor: a child forked by another thread of
/// the same process shares it until the child's `exec` closes its copy (`O_CLOEXEC`). Releasing therefore
/// unlocks explicitly before closing; closing alone would leave the store locked for as long as such a copy
/// lives.
package final class StoreLock: Sendable {
    /// The open lock file.
    let descriptor: Int32
    /// The lock file's path.
    let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// What a watch writes into the lock file as its purpose; another run waits for a lock held by it.
    package static let watchPurpose = "tablesync watch"
    /// How long a run waits for a watch's run to give the lock back: far longer than a watch's run of hand edits,
    /// short enough that a stuck one is reported.
    static let watchWait: Duration = .seconds(30)

    /// Takes the lock of the store at `layout`, or throws ``StoreLockError`` when another process holds it: at
    /// once, or after ``watchWait`` when a watch's run holds it. A watch itself never waits (`purpose` is
    /// ``watchPurpose``): it tries again later. `whenWaiting` is called once, as such a wait begins. The wait blocks
    /// the calling thread; ``acquireWaiting(layout:purpose:)`` waits without holding one.
    package static func acquire(
        layout: StoreLayout, purpose: String, whenWaiting: @escaping () -> Void = {}
    ) throws -> StoreLock {
        var tries = try Tries(layout: layout, purpose: purpose, whenWaiting: whenWaiting)
        while true {
            if let lock = try tries.next() { return lock }
            usleep(20_000)
        }
    }

    /// Takes the lock as ``acquire(layout:purpose:whenWaiting:)`` does, but waits for a watch's run by suspending,
    /// holding no thread meanwhile.
    package static func acquireWaiting(
        layout: StoreLayout, purpose: String, whenWaiting: @escaping () -> Void = {}
    ) async throws -> StoreLock {
        var tries = try Tries(layout: layout, purpose: purpose, whenWaiting: whenWaiting)
        while true {
            if let lock = try tries.next() { return lock }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The tries of one acquisition, whichever way it waits between them.
    private struct Tries {
        let layout: StoreLayout
        let purpose: String
        /// When a wait for a watch's run ends; at once for a watch.
        let deadline: ContinuousClock.Instant
        let whenWaiting: () -> Void
        var waiting = false

        /// Prepares the cache directory that holds the lock file.
        init(layout: StoreLayout, purpose: String, whenWaiting: @escaping () -> Void) throws {
            try CacheDirectory.prepare(layout)
            self.layout = layout
            self.purpose = purpose
            self.whenWaiting = whenWaiting
            deadline = ContinuousClock.now + (purpose == StoreLock.watchPurpose ? .zero : StoreLock.watchWait)
        }

        /// One try: the lock, or `nil` when a watch's run holds it and the deadline has not passed (the first such
        /// try calls `whenWaiting`); throws ``StoreLockError`` when anything else holds it, or the wait is over.
        mutating func next() throws -> StoreLock? {
            do {
                return try StoreLock.acquire(path: layout.lockFile, purpose: purpose)
            } catch let error as StoreLockError where error.holder.hasSuffix(StoreLock.watchPurpose) && .now < deadline
            {
                if !waiting { whenWaiting() }
                waiting = true
                return nil
            }
        }
    }

    /// Takes the lock on the file at `path`, or throws ``StoreLockError`` at once when another process holds it.
    package static func acquire(path: String, purpose: String) throws -> StoreLock {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileSystemError(operation: "open the lock file", path: path, code: errno) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(descriptor)
            if code == EWOULDBLOCK {
                let holder = (try? FileSystem.readFile(path)).map { String(decoding: $0, as: UTF8.self) } ?? ""
                throw StoreLockError(path: path, holder: holder.trimmingWhitespace())
            }
            throw FileSystemError(operation: "lock", path: path, code: code)
        }
        let note = Array("pid \(getpid()): \(purpose)\n".utf8)
        if ftruncate(descriptor, 0) == 0 {
            _ = note.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        return StoreLock(descriptor: descriptor, path: path)
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

/// Another run holds the store's lock.
public struct StoreLockError: CategorizedError, Equatable {
    /// The lock file.
    package let path: String
    /// What the holder wrote into the lock file (its pid and command), possibly empty.
    package let holder: String

    /// Always ``FailureKind/locked``.
    public var kind: FailureKind { .locked }

    /// Who holds the lock, and what to do.
    public var description: String {
        let who = holder.isEmpty ? "another run" : "another run (\(holder))"
        return "the store is locked by \(who); try again when it has finished."
    }
}

extension String {
    package func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
