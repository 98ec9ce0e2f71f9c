#if canImport(Glibc)
import Foundation
import Glibc
import Synchronization
import TableSyncStorage

/// The store's directories watched with inotify: calls `onChange` when a file that a push reads was written and
/// closed, renamed into place, or removed (``WatchedName``), with the record files named (``ScanScope``); and when
/// the kernel's queue overflowed or a table's directory was made again, with ``ScanScope/everything`` (anything
/// may have changed). A write still open calls nothing: the close, or the rename of an editor's temporary file, does.
///
/// It watches the store's root (the journal, the settings, the acknowledgements), `tables/` and each table's
/// directory; a table directory made again (a `git checkout`, an `rm -rf` then a pull) is watched again, and
/// counts as a change. One thread of its own waits in `poll` and stops when the value goes away.
final class FileEvents: Sendable {
    private let descriptor: Int32
    /// Written to wake the thread when it should stop.
    private let wakePipe: (read: Int32, write: Int32)
    private let stopped = Mutex(false)

    /// Watches `layout`'s directories for `tables`, or returns `nil` when inotify cannot watch them (not offered, the
    /// watch limit reached): the caller then scans at an interval.
    init?(layout: StoreLayout, tables: [String], onChange: @escaping @Sendable (ScanScope) -> Void) {
        let descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            close(descriptor)
            return nil
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let watches = WatchedDirectories(layout: layout, tables: tables, descriptor: descriptor)
        guard watches.addAll() else {
            close(descriptor)
            close(ends[0])
            close(ends[1])
            return nil
        }
        self.descriptor = descriptor
        self.wakePipe = (ends[0], ends[1])
        let wake = ends[0]
        let thread = Thread {
            Self.readLoop(descriptor: descriptor, wake: wake, watches: watches, onChange: onChange)
        }
        thread.name = "tablesync file events"
        thread.start()
    }

    /// Watches as ``init(layout:tables:onChange:)`` does, posting each change to `triggers`
    /// (``WatchTrigger/files(_:)``).
    convenience init?(layout: StoreLayout, tables: [String], _ triggers: WatchTriggers) {
        self.init(layout: layout, tables: tables) { scope in Task { await triggers.post(.files(scope)) } }
    }

    /// Stops the thread (a call of `onChange` under way ends first).
    func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
        close(wakePipe.write)
    }

    deinit {
        stop()
    }

    private static func readLoop(
        descriptor: Int32, wake: Int32, watches: WatchedDirectories, onChange: @Sendable (ScanScope) -> Void
    ) {
        defer {
            close(descriptor)
            close(wake)
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var polled = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
        ]
        while true {
            guard poll(&polled, 2, -1) >= 0 || errno == EINTR else { return }
            if polled[1].revents != 0 { return }
            guard polled[0].revents != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else {
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                return
            }
            let events = InotifyEvent.parse(buffer[0..<count])
            if let changed = watches.handle(events) { onChange(changed) }
        }
    }
}

/// The directories an inotify descriptor watches, by watch descriptor, and what an event in each means.
private final class WatchedDirectories: @unchecked Sendable {
    // Touched by the init, then only by the reading thread.
    private let layout: StoreLayout
    private let tables: Set<String>
    private let descriptor: Int32
    /// Each watch's directory: its kind, and the table of a table's directory.
    private var kinds: [Int32: (kind: WatchedName.Directory, table: String?)] = [:]

    /// What a change in a directory is: the files of the root and of a table count; `tables/` made in the root and
    /// a table's directory made in `tables/` are watched in turn.
    private static let fileMask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
    private static let directoryMask = fileMask | UInt32(IN_CREATE | IN_ONLYDIR)

    init(layout: StoreLayout, tables: [String], descriptor: Int32) {
        self.layout = layout
        self.tables = Set(tables)
        self.descriptor = descriptor
    }

    /// Adds every watch; `false` when one cannot be added for a reason other than a missing table directory.
    func addAll() -> Bool {
        guard add(layout.root, as: .root, mask: Self.directoryMask) else { return false }
        return addTables()
    }

    /// Watches `tables/` and each table's directory in it.
    private func addTables() -> Bool {
        guard add(layout.tablesDirectory, as: .tables, mask: Self.directoryMask) || errno == ENOENT else {
            return false
        }
        for table in tables {
            guard add(layout.tableDirectory(table), as: .table, of: table, mask: Self.fileMask) || errno == ENOENT
            else {
                return false
            }
        }
        return true
    }

    private func add(_ path: String, as kind: WatchedName.Directory, of table: String? = nil, mask: UInt32) -> Bool {
        let watch = inotify_add_watch(descriptor, path, mask)
        guard watch >= 0 else { return false }
        kinds[watch] = (kind, table)
        return true
    }

    /// What `events` changed that a push may need to see, or `nil` when nothing; watches a table directory made
    /// again. The settings, a table's directory made again, or an overflow of the kernel's queue change
    /// ``ScanScope/everything``; the root's other files change no record file (a push is due, for the journal).
    func handle(_ events: [InotifyEvent]) -> ScanScope? {
        var changed: ScanScope?
        func note(_ scope: ScanScope) { changed = changed?.adding(scope) ?? scope }
        for event in events {
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                note(.everything)
                continue
            }
            if event.mask & UInt32(IN_IGNORED) != 0 {
                kinds[event.watch] = nil
                continue
            }
            guard let (kind, table) = kinds[event.watch] else { continue }
            let isDirectory = event.mask & UInt32(IN_ISDIR) != 0
            if kind == .root, isDirectory, layout.root + "/" + event.name == layout.tablesDirectory {
                // `tables/` made again (a checkout, a restore): it and the tables in it are watched anew.
                if event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { _ = addTables() }
                note(.everything)
            } else if kind == .tables, isDirectory, tables.contains(event.name) {
                if event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                    _ = add(layout.tableDirectory(event.name), as: .table, of: event.name, mask: Self.fileMask)
                }
                note(.everything)
            } else if WatchedName.matters(event.name, in: kind) {
                switch kind {
                case .table: note(table.map { .files([$0: [event.name]]) } ?? .everything)
                case .root: note(event.name == StoreLayout.settingsFileName ? .everything : .nothing)
                case .tables: break
                }
            }
        }
        return changed
    }
}

/// One event read from an inotify descriptor.
struct InotifyEvent: Equatable {
    var watch: Int32
    var mask: UInt32
    var name: String

    /// The events in `bytes`, as `read` returned them: a 16-byte header (watch, mask, cookie, name length) and the
    /// name, padded with NULs.
    static func parse(_ bytes: ArraySlice<UInt8>) -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        var offset = bytes.startIndex
        func word(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        while offset + 16 <= bytes.endIndex {
            let length = Int(word(offset + 12))
            let nameEnd = min(offset + 16 + length, bytes.endIndex)
            let name = bytes[(offset + 16)..<nameEnd].prefix { $0 != 0 }
            events.append(
                InotifyEvent(
                    watch: Int32(bitPattern: word(offset)), mask: word(offset + 4),
                    name: String(decoding: name, as: UTF8.self)))
            offset = nameEnd
        }
        return events
    }
}
#endif

/// Which names in the store's watched directories a push reads, so that a change to them wakes `watch`: the
/// root's journal, acknowledgements, settings and queries, and a table's record files. Editors' swap and backup
/// files, and temporary files before their rename, wake nothing.
enum WatchedName {
    /// What a watched directory is.
    enum Directory: Equatable {
        case root
        case tables
        case table
    }

    /// Whether a change to `name` in a directory of `kind` may need a push.
    static func matters(_ name: String, in kind: Directory) -> Bool {
        switch kind {
        case .root:
            return [
                StoreLayout.journalFileName, StoreLayout.acknowledgementsFileName, StoreLayout.settingsFileName,
                StoreLayout.queriesFileName
            ].contains(name)
        case .tables:
            return false
        case .table:
            return name.hasSuffix(".json") && !name.hasPrefix(".")
        }
    }
}
