import Foundation
import SyncProtocol
import TableSyncStorage

/// An open store: the entry point of the TableSync library.
///
/// A context opened ``AccessMode/readWrite`` holds the store's lock for its whole life (one writer per
/// store; a second one fails at once with ``StoreLockError``), repairs what an interrupted run left behind,
/// and owns the journal. ``AccessMode/readOnly`` takes no lock and refuses changes: `status` and local
/// queries use it, so they never wait for a running sync.
///
/// ```swift
/// let context = try SyncContext(directory: "store")
/// let todo = try await context.table("todo")
/// let item = try await todo.insert(["text": "Buy milk", "complete": false])
/// ```
public actor SyncContext {
    /// Whether the context may change the store.
    public enum AccessMode: Sendable {
        /// No lock, no changes: for status, verify and local reads, which must not wait for a running sync and
        /// work on a store the user cannot write.
        case readOnly
        /// Holds the lock, repairs what an interrupted run left, and may change the store.
        case readWrite
    }

    /// Where the store's files are.
    package nonisolated let layout: StoreLayout
    /// The settings read from `tablesync.json`.
    public nonisolated let settings: StoreSettings
    /// The mode the context was opened in.
    package nonisolated let mode: AccessMode
    /// The pending operations, in push order.
    var journal: Journal
    /// The record files and their stat index.
    var store: RecordStore
    /// The record files alone, read without waiting for the context (a push reads each file it sends).
    nonisolated let recordFiles: RecordFiles
    /// The conflict files.
    nonisolated let conflictFiles: ConflictStore
    /// Spare files for record writes (``SpareFiles``); trimmed to what is kept for the next run before the lock
    /// is released.
    nonisolated let spareFiles: SpareFiles
    private var lock: StoreLock?
    /// The store's git repository once looked up (``gitRepository()``): `.some(nil)` outside git.
    var gitLookup: GitRepository??
    /// Which clone of its git repository the store is, if it is in one: its operations are this context's to send.
    nonisolated let clone: CloneIdentity.Lookup
    /// The git baseline of the push, pull or sync under way (``gitBaseline()``).
    var operationBaseline: GitBaseline?
    /// The ids of the operations in the journal of `HEAD` when the push began (``Acknowledgements``).
    var committedOperationIDs: Set<String> = []
    /// Where the context's work runs: a thread of the store's own, off the threads every task shares
    /// (``StoreExecutor``).
    private nonisolated let executor = StoreExecutor()

    /// The context's executor (``StoreExecutor``).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Opens the store at (or above) `directory`.
    /// - Parameters:
    ///   - directory: the store's root, or a directory inside it (found as git finds its repository).
    ///   - mode: ``AccessMode/readWrite`` (the default) takes the lock and repairs what an interrupted run left.
    ///   - purpose: written into the lock file so a second run can say who holds the lock.
    /// - Throws: ``StoreError`` when no store is found (``StoreError/notAStore(path:)``) or its settings or journal
    ///   are invalid (kind ``FailureKind/invalidStore``, naming the file and line), or its format is newer than this
    ///   binary reads (``StoreError/newerStoreFormat(found:supported:)``; an older one is upgraded in place on a
    ///   read-write open, ``StoreFormat``); ``StoreLockError`` when another run holds the lock; ``FileSystemError``
    ///   when the disk fails.
    ///
    /// A wait for a watch's run blocks the calling thread; ``open(directory:mode:purpose:)`` waits without holding one.
    public init(directory: String, mode: AccessMode = .readWrite, purpose: String = "tablesync library") throws {
        let found = try FoundStore(directory: directory)
        let lock = mode == .readOnly ? nil : try StoreLock.acquire(layout: found.layout, purpose: purpose)
        try self.init(found, mode: mode, lock: lock)
    }

    /// Opens the store at (or above) `directory` as ``init(directory:mode:purpose:)`` does, but waits for a watch's
    /// run to give the lock back by suspending, holding no thread of the shared pool meanwhile: how the command line
    /// opens a store.
    public static func open(
        directory: String, mode: AccessMode = .readWrite, purpose: String = "tablesync library"
    ) async throws -> SyncContext {
        let found = try FoundStore(directory: directory)
        let lock = mode == .readOnly ? nil : try await StoreLock.acquireWaiting(layout: found.layout, purpose: purpose)
        return try SyncContext(found, mode: mode, lock: lock)
    }

    /// A store found and checked before its lock is taken: a store of a newer format is refused before anything of
    /// it is touched, the lock included.
    private struct FoundStore {
        let layout: StoreLayout
        let settingsBytes: [UInt8]
        let needsUpgrade: Bool

        init(directory: String) throws {
            layout = try StoreLocator.locate(from: directory)
            settingsBytes = try SyncContext.readSettingsFile(layout)
            needsUpgrade = try StoreFormat.check(settingsBytes: settingsBytes)
        }
    }

    private init(_ found: FoundStore, mode: AccessMode, lock: StoreLock?) throws {
        let (layout, settingsBytes, needsUpgrade) = (found.layout, found.settingsBytes, found.needsUpgrade)
        if mode == .readWrite { try StoreRecovery.recover(layout: layout) }
        if mode == .readWrite, needsUpgrade { try StoreFormat.upgrade(layout: layout, settingsBytes: settingsBytes) }
        let spareFiles = SpareFiles(directory: layout.sparesDirectory, adoptingRetained: mode == .readWrite)
        self.spareFiles = spareFiles
        self.store = RecordStore(layout: layout, spares: spareFiles)
        self.recordFiles = RecordFiles(layout: layout)
        self.conflictFiles = ConflictStore(layout: layout)
        self.layout = layout
        self.mode = mode
        self.lock = lock
        self.settings = try StoreSettings.load(from: settingsBytes, file: StoreLayout.settingsFileName)
        var journal = try Journal.load(layout: layout, acknowledged: Acknowledgements.load(layout: layout))
        let clone = try CloneIdentity.of(storeRoot: layout.root, creating: mode == .readWrite)
        journal.origin = clone.sender
        self.clone = clone
        // A push killed before its journal was rewritten, or lines joined by a merge: make the file exact.
        if mode == .readWrite && journal.needsRewriteOnSave { try journal.save(layout: layout) }
        self.journal = journal
    }

    /// Creates a store in `directory` (which may exist but must not be a store yet) and opens it. With
    /// `queryPerTable`, `queries.json` starts with one query per table, named after the table, that pulls all of it
    /// (what `tablesync init` does), so that `sync` pulls from the first run.
    /// - Throws: ``StoreError/alreadyInitialized(path:)`` when `directory` holds a store,
    ///   ``StoreError/invalidSettings(file:field:reason:)`` when `settings` are invalid, ``FileSystemError`` when the
    ///   disk fails; then as ``init(directory:mode:purpose:)``.
    public static func initialize(
        directory: String, settings: StoreSettings, queryPerTable: Bool = false
    ) throws -> SyncContext {
        let layout = StoreLayout(root: StoreLocator.absolute(directory))
        try StoreInitializer.initialize(layout: layout, settings: settings, queryPerTable: queryPerTable)
        return try SyncContext(directory: layout.root)
    }

    /// Releases the store's lock at once (it is also released when the context goes away). The context can
    /// still read, but no longer change the store.
    public func close() {
        spareFiles.finishRunBlocking()
        lock = nil
    }

    deinit {
        spareFiles.finishRunBlocking()
        executor.finish()
    }

    /// Runs `operation` (a push, a pull, a sync), then trims the spare files it kept to those kept for the next
    /// run, whether it succeeds or fails; after a failure for lack of space, removes them all.
    func releasingSpareFiles<Result: Sendable>(_ operation: () async throws -> Result) async throws -> Result {
        do {
            let result = try await operation()
            await spareFiles.finishRun()
            return result
        } catch {
            // On a full disk the spares kept for the next run would keep it full: they all go.
            if let failure = error as? FileSystemError, failure.isOutOfSpace {
                try? spareFiles.removeAll()
            } else {
                await spareFiles.finishRun()
            }
            throw error
        }
    }

    /// The table named `name`, which must be one of the store's tables.
    /// - Throws: ``StoreError/unknownTable(_:)`` when `name` is not one of the store's tables.
    public func table(_ name: String) throws -> SyncTable {
        try requireTable(name)
        return SyncTable(name: name, context: self)
    }

    // MARK: - Internals shared by the table operations

    func requireTable(_ name: String) throws {
        if let problem = TableName.problem(with: name) { throw StoreError.invalidTableName(name, reason: problem) }
        guard settings.tables.contains(name) else { throw StoreError.unknownTable(name) }
    }

    func requireWritable() throws {
        guard mode == .readWrite, lock != nil else { throw StoreError.readOnly }
    }

    private static func readSettingsFile(_ layout: StoreLayout) throws -> [UInt8] {
        do {
            return try FileSystem.readFile(layout.settingsFile)
        } catch let error as FileSystemError where error.isNotFound {
            throw StoreError.notAStore(path: layout.root)
        }
    }
}

/// What a read-write open repairs before anything else runs.
enum StoreRecovery {
    static func recover(layout: StoreLayout) throws {
        for (name, _) in try FileSystem.listDirectory(layout.temporaryDirectory)
        where name.hasPrefix(TemporaryName.prefix) {
            try FileSystem.removeFile(layout.temporaryDirectory + "/" + name)
        }
        try SyncedRecordWriter.recover(layout: layout)
    }
}
