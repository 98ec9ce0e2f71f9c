import SyncProtocol
import Synchronization
import TableSyncStorage

/// Live sync: keeps a store and its server in step while it runs (`tablesync watch`).
///
/// Hand edits, new files and deletions are pushed within half a second of their write (file events from
/// inotify, a burst settled for a tenth of a second); server changes are pulled as soon as the server's change feed
/// (`GET /changes`) names their table, with the usual incremental pull, so watermarks and crash safety are those
/// of `sync`. Against a server without the feed (Azure Mobile Apps, Datasync) every query is pulled every 30
/// seconds; on a file system without inotify the store is scanned every 10 seconds.
///
/// The store's lock is held only while a run pushes or pulls, so other commands work between runs; a run that finds
/// the lock taken waits for it. A failed run is tried again after a backoff with jitter, and the first run after a
/// failure, or after the change feed comes back, pulls every query: nothing is missed, and the journal's rules mean
/// nothing is sent twice.
///
/// ```swift
/// let watcher = StoreWatcher(directory: "store")
/// Task { try await watcher.run { event in print(event) } }
/// // later:
/// watcher.stop()
/// ```
public final class StoreWatcher: Sendable {
    /// How a watch runs.
    package struct Settings: Sendable {
        /// When runs happen.
        package var timing = WatchTiming()
        /// Seconds between pulls of every query when the server offers no change feed.
        package var pollInterval: Double = 30
        /// Seconds between scans of the store when the file system reports no writes (no inotify); `nil` to rely on
        /// file events, falling back to 10 seconds when there are none.
        package var scanInterval: Double?
        /// Called after ``WatchTiming/quietPeriod`` without a run that changed the store, and when the watch stops
        /// after such runs, with the store open and locked: `tablesync watch --commit` commits the store's files.
        /// Returns what to report (a commit's subject), or `nil` when nothing was done.
        package var afterQuietPeriod: (@Sendable (SyncContext) async throws -> String?)?

        /// The default settings: pushes within half a second, polls every 30 seconds without a feed, no commit.
        package init() {}
    }

    private let directory: String
    private let options: SyncOptions
    private let settings: Settings
    private let triggers = WatchTriggers()

    /// A watcher of the store at (or above) `directory`, pushing and pulling with `options`: pushes within half a
    /// second of a write, polls every 30 seconds a server without the change feed, commits nothing.
    public convenience init(directory: String, options: SyncOptions = SyncOptions()) {
        self.init(directory: directory, options: options, settings: Settings())
    }

    /// A watcher with `settings` (`tablesync watch` sets them from its options).
    package init(directory: String, options: SyncOptions, settings: Settings) {
        self.directory = directory
        self.options = options
        self.settings = settings
    }

    /// Ends ``run(onEvent:)`` once what is in flight has finished (a run under way ends as it would; a commit due
    /// is made).
    public func stop() {
        Task { await triggers.post(.stop) }
    }

    /// Watches until ``stop()`` or until its task is cancelled, telling `onEvent` what happens.
    /// - Throws: ``StoreError`` when no store is found at `directory` or its settings are invalid;
    ///   ``StoreLockError`` when another watch runs on the store. Failures of runs after the start are told as
    ///   ``WatchEvent/failed(error:retryIn:)`` and tried again, never thrown.
    public func run(onEvent: @escaping @Sendable (WatchEvent) -> Void) async throws {
        let opened = try SyncContext(directory: directory, mode: .readOnly)
        let layout = opened.layout
        try CacheDirectory.prepare(layout)
        let watchLock = try StoreLock.acquire(path: layout.watchLockFile, purpose: StoreLock.watchPurpose)
        defer { withExtendedLifetime(watchLock) {} }
        let storeSettings = opened.settings
        let tables = storeSettings.tables.sorted()
        let triggers = self.triggers
        #if canImport(Glibc)
        let fileEvents = settings.scanInterval == nil ? FileEvents(layout: layout, tables: tables, triggers) : nil
        #else
        let fileEvents: FileEvents? = nil
        #endif
        let scanInterval = fileEvents == nil ? settings.scanInterval ?? 10 : nil
        // The follower backs off on its own: its requests are tried once, and the first one (which the start
        // event waits for) fails within 10 s on a server that does not answer.
        let followerOptions = options.with {
            $0.retryPolicy = .none
            $0.timeout = min($0.timeout, 10)
        }
        let feed = ChangeFeedFollower(
            connection: ServerConnection(settings: storeSettings, layout: layout, options: followerOptions),
            tables: tables, options: options, timing: settings.timing, pollInterval: settings.pollInterval,
            triggers: triggers, onEvent: onEvent)
        onEvent(
            .started(
                changeFeed: (try? await feed.limits()) != nil, fileEvents: fileEvents != nil,
                pollInterval: settings.pollInterval))
        let sources = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await feed.follow() }
                if let scanInterval {
                    group.addTask {
                        while !Task.isCancelled {
                            try? await Task.sleep(for: .seconds(scanInterval))
                            await triggers.post(.files(.everything))
                        }
                    }
                }
            }
        }
        var loop = WatchLoop(
            layout: layout, identity: FileSystem.identity(layout.root), options: options, settings: settings,
            triggers: triggers, onEvent: onEvent)
        // A cancelled task stops the watch too; unlike ``stop()``, it cancels the run under way.
        await withTaskCancellationHandler {
            await loop.run()
        } onCancel: {
            Task { await triggers.post(.stop) }
        }
        // Nothing of the watch may still run when the process exits (see ServerConnection.preparing).
        sources.cancel()
        await sources.value
        #if canImport(Glibc)
        fileEvents?.stop()
        #endif
        onEvent(.stopped)
        if loop.storeReplaced { throw StoreReplaced(path: layout.root) }
    }
}

/// What the next run must do, gathered from the triggers since the last one.
struct WatchNeeds: Equatable {
    /// Scan for hand edits and push.
    var push = false
    /// Pull the queries of these tables.
    var pullTables: Set<String> = []
    /// Pull every query.
    var pullAll = false
    /// The files whose events came since the last run: what its scan for hand edits looks at (the first run, and
    /// one after a failure, look at every file).
    var scanScope = ScanScope.nothing

    var isEmpty: Bool { !push && pullTables.isEmpty && !pullAll }
    /// Whether the run only pushes, for files that changed (a burst settles before it).
    var pushesOnly: Bool { push && pullTables.isEmpty && !pullAll }

    /// Adds what `trigger` asks for.
    mutating func add(_ trigger: WatchTrigger) {
        switch trigger {
        case .files(let scope):
            push = true
            scanScope = scanScope.adding(scope)
        case .serverChanged(let tables): pullTables.formUnion(tables)
        case .catchUp: pullAll = true
        case .stop: break
        }
    }
}

/// The loop of ``StoreWatcher/run(onEvent:)``: takes triggers, lets file changes settle, runs, backs off after
/// failures, and commits after a quiet period.
private struct WatchLoop {
    let layout: StoreLayout
    let options: SyncOptions
    let settings: StoreWatcher.Settings
    let triggers: WatchTriggers
    let onEvent: @Sendable (WatchEvent) -> Void

    private var needs = WatchNeeds(push: true, pullAll: true, scanScope: .everything)
    /// When the first and the latest file change of the burst waiting to be pushed came.
    private var burst: (first: ContinuousClock.Instant, latest: ContinuousClock.Instant)?
    /// When a failed run may be tried again.
    private var retryAt: ContinuousClock.Instant?
    private var failures = 0
    /// When the last run that changed the store ended, if no commit followed it.
    private var uncommittedSince: ContinuousClock.Instant?
    /// When a commit that found the lock taken may be tried again.
    private var commitRetryAt: ContinuousClock.Instant?
    private var reportedLockHolder: String?
    /// The store's directory as the watch opened it.
    private let identity: FileSystem.Identity?
    /// Whether the store's directory was found replaced: the watch stops without a run or a commit more.
    private(set) var storeReplaced = false

    init(
        layout: StoreLayout, identity: FileSystem.Identity?, options: SyncOptions, settings: StoreWatcher.Settings,
        triggers: WatchTriggers, onEvent: @escaping @Sendable (WatchEvent) -> Void
    ) {
        self.layout = layout
        self.identity = identity
        self.options = options
        self.settings = settings
        self.triggers = triggers
        self.onEvent = onEvent
    }

    mutating func run() async {
        while true {
            let now = ContinuousClock.now
            let runTime = needs.isEmpty ? nil : runTime(now)
            let due = runTime.map { now >= $0 } ?? false || commitTime.map { now >= $0 } ?? false
            if due, FileSystem.identity(layout.root) != identity {
                // Removed and made again in place (a re-clone), perhaps in the middle of a git merge: another store,
                // which this watch's state does not describe. Nothing is run or committed in it.
                storeReplaced = true
                return
            }
            if let runTime, now >= runTime {
                await runOnce()
                continue
            }
            if let commitTime, now >= commitTime {
                await commit()
                continue
            }
            let deadline = [runTime, commitTime].compactMap { $0 }.min()
            guard let trigger = await triggers.next(before: deadline) else { continue }
            options.logger.debug("watch: \(trigger)")
            if trigger == .stop { break }
            if case .files = trigger {
                let now = ContinuousClock.now
                burst = (burst?.first ?? now, now)
            }
            needs.add(trigger)
        }
        // Changes already seen are sent before the stop, unless runs are failing (the next start finds them anyway).
        if !needs.isEmpty, retryAt == nil, !Task.isCancelled { await runOnce() }
        if uncommittedSince != nil { await commit() }
    }

    /// When the next run may start (`now` at the soonest): after a failure's backoff, and after a burst of file
    /// changes has settled.
    private func runTime(_ now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        var time = max(retryAt ?? now, now)
        if let burst, needs.pushesOnly {
            time = max(time, settings.timing.pushTime(firstChange: burst.first, latestChange: burst.latest))
        }
        return time
    }

    /// When the store is committed, if a commit is asked for and a run changed it: not while changes already seen
    /// wait for their run (they are part of what the commit is for), unless runs are failing.
    private var commitTime: ContinuousClock.Instant? {
        guard settings.afterQuietPeriod != nil, let uncommittedSince, needs.isEmpty || retryAt != nil else {
            return nil
        }
        return max(uncommittedSince + .seconds(settings.timing.quietPeriod), commitRetryAt ?? uncommittedSince)
    }

    private mutating func runOnce() async {
        let running = needs
        needs = WatchNeeds()
        burst = nil
        options.logger.debug("watch: run \(running)")
        do {
            let changed = try await WatchRun.run(running, layout: layout, options: options, onEvent: onEvent)
            if changed { uncommittedSince = .now }
            failures = 0
            retryAt = nil
            reportedLockHolder = nil
        } catch let error as StoreLockError {
            needs.add(running)
            retryAt = .now + .milliseconds(200)
            if reportedLockHolder != error.holder {
                reportedLockHolder = error.holder
                onEvent(.waitingForLock(holder: error.holder))
            }
        } catch {
            // What failed is run again, with a pull of everything: the server may have changed meanwhile.
            needs.add(running)
            needs.push = true
            needs.pullAll = true
            needs.scanScope = .everything
            failures += 1
            let wait = settings.timing.backoff(afterFailures: failures, random: Double.random(in: 0..<1))
            retryAt = .now + .seconds(wait)
            onEvent(.failed(error: WatchFailure.categorized(error), retryIn: wait))
        }
    }

    private mutating func commit() async {
        guard let afterQuietPeriod = settings.afterQuietPeriod else { return }
        let context: SyncContext
        do {
            context = try SyncContext(directory: layout.root, purpose: StoreLock.watchPurpose)
        } catch {
            // Another command holds the lock (or the store cannot be opened, which the next run reports).
            commitRetryAt = .now + .milliseconds(200)
            return
        }
        do {
            if let subject = try await afterQuietPeriod(context) { onEvent(.committed(subject: subject)) }
        } catch {
            onEvent(.commitFailed(reason: "\(error)"))
        }
        await context.close()
        uncommittedSince = nil
        commitRetryAt = nil
    }
}

extension WatchNeeds {
    mutating func add(_ other: WatchNeeds) {
        push = push || other.push
        pullTables.formUnion(other.pullTables)
        pullAll = pullAll || other.pullAll
        scanScope = scanScope.adding(other.scanScope)
    }
}

/// One run of a watch: the store opened and locked for it alone, a push, or a push and pulls.
enum WatchRun {
    /// Runs what `needs` asks for, tells what moved, and returns whether the store's files changed.
    static func run(
        _ needs: WatchNeeds, layout: StoreLayout, options: SyncOptions, onEvent: @Sendable (WatchEvent) -> Void
    ) async throws -> Bool {
        let context = try SyncContext(directory: layout.root, purpose: StoreLock.watchPurpose)
        let options = options.with { $0.scanScope = needs.scanScope }
        do {
            let changed: Bool
            if needs.pullAll || !needs.pullTables.isEmpty {
                let report = try await context.sync(
                    pullingTables: needs.pullAll ? nil : needs.pullTables, options: options)
                changed = report.movedSomething
                if changed { onEvent(.synced(report)) }
            } else {
                let report = try await context.push(options: options)
                changed = report.movedSomething
                if changed { onEvent(.pushed(report)) }
            }
            await context.close()
            return changed
        } catch {
            await context.close()
            throw error
        }
    }
}

extension PushReport {
    /// Whether the push sent or settled anything, or found something to tell.
    var movedSomething: Bool {
        applied > 0 || !conflicts.isEmpty || !rejected.isEmpty || settledByPolicy > 0 || !problems.isEmpty
            || adoption.takenFromServer > 0 || adoption.restored > 0 || !adoption.conflicts.isEmpty
    }
}

extension SyncReport {
    /// Whether the sync's push or any of its pulls moved anything.
    var movedSomething: Bool {
        push.movedSomething || pulls.values.contains { $0.written > 0 || $0.removed > 0 || $0.push.movedSomething }
    }
}

/// A failure that came without a kind, given one (``FailureKind/other``) so it can be told like the others.
struct WatchFailure: CategorizedError {
    let description: String
    var kind: FailureKind { .other }

    static func categorized(_ error: any Error) -> any CategorizedError {
        error as? any CategorizedError ?? WatchFailure(description: "\(error)")
    }
}

/// Follows the server's change feed and posts the tables it names; without a feed, posts a catch-up every poll
/// interval.
final class ChangeFeedFollower: Sendable {
    let connection: ServerConnection
    let tables: [String]
    let options: SyncOptions
    let timing: WatchTiming
    let pollInterval: Double
    let triggers: WatchTriggers
    let onEvent: @Sendable (WatchEvent) -> Void
    private let feedLimits = Mutex<ChangeFeedLimits??>(nil)

    init(
        connection: ServerConnection, tables: [String], options: SyncOptions, timing: WatchTiming,
        pollInterval: Double, triggers: WatchTriggers, onEvent: @escaping @Sendable (WatchEvent) -> Void
    ) {
        self.connection = connection
        self.tables = tables
        self.options = options
        self.timing = timing
        self.pollInterval = pollInterval
        self.triggers = triggers
        self.onEvent = onEvent
    }

    /// The change feed's limits, or `nil` when the server offers no feed for the store's tables; asked once it
    /// answers.
    /// - Throws: ``SyncError`` when the server cannot be asked.
    func limits() async throws -> ChangeFeedLimits? {
        if let known = feedLimits.withLock({ $0 }) { return known }
        let features = try await connection.serverFeatures(client: try await connection.client(table: nil))
        let limits = tables.count <= ChangeFeed.maxTables ? features.changeFeed : nil
        feedLimits.withLock { $0 = .some(limits) }
        return limits
    }

    /// Follows the feed until cancelled, or polls when there is none.
    func follow() async {
        var etag: String?
        var previous: ChangeMarks?
        var failures = 0
        // Made once the limits are known, and kept: its connection and protocol version serve every request.
        var feed: TableClient?
        while !Task.isCancelled {
            do {
                guard let limits = try await limits() else {
                    try? await Task.sleep(for: .seconds(pollInterval))
                    if !Task.isCancelled { await triggers.post(.catchUp) }
                    continue
                }
                let client: TableClient
                if let feed {
                    client = feed
                } else {
                    client = try await feedClient(for: limits)
                    feed = client
                }
                switch try await client.changes(tables: tables, waitSeconds: limits.maxWaitSeconds, etag: etag) {
                case .unchanged:
                    break
                case .marks(let marks, let tag):
                    if let previous {
                        let changed = marks.tablesChanged(since: previous)
                        if !changed.isEmpty { await triggers.post(.serverChanged(changed)) }
                    } else {
                        // The first marks, at the start or back after a failure: whatever changed before them, and
                        // after the last pull, is pulled once.
                        await triggers.post(.catchUp)
                    }
                    previous = marks
                    etag = tag
                    failures = 0
                }
            } catch {
                if Task.isCancelled { return }
                failures += 1
                previous = nil
                etag = nil
                let wait = timing.backoff(afterFailures: failures, random: Double.random(in: 0..<1))
                if failures == 1 { onEvent(.feedLost(error: WatchFailure.categorized(error), retryIn: wait)) }
                try? await Task.sleep(for: .seconds(wait))
            }
        }
    }

    /// A client whose requests outlast the feed's longest wait, and that does not retry: a failure is backed off
    /// here.
    private func feedClient(for limits: ChangeFeedLimits) async throws -> TableClient {
        let options = options.with {
            $0.timeout = Double(limits.maxWaitSeconds) + max(10, $0.timeout)
            $0.retryPolicy = .none
        }
        return try await ServerConnection(settings: connection.settings, layout: connection.layout, options: options)
            .client(table: nil)
    }
}
