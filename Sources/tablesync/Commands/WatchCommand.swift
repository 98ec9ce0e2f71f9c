import ArgumentParser
import Dispatch
import Foundation
import Logging
import SyncProtocol
import Synchronization
import TableSync

/// `tablesync watch`.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract:
            """
            Keep the store and the server in step while it runs: hand edits pushed as they are written, server changes \
            pulled as they are made.
            """,
        discussion: """
            Pushes a written, renamed or deleted record file within half a second (inotify; --scan-interval on a \
            file system without it), and pulls a table as soon as the server's change feed names it \
            (tablesync-server), \
            or every query each --poll-interval against a server without the feed. The lock is held only while a run \
            pushes or pulls: status, insert, resolve and a cron sync work beside it (a command that finds a watch's \
            run \
            holding the lock waits for it). A failed run is tried again with backoff, then everything is pulled once. \
            SIGTERM or SIGINT stops it after what is in flight, exit 0. Events go to standard error as log lines, or \
            to standard output as one JSON object per line with --json.
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var server: ServerOptions
    @Option(help: ArgumentHelp("Seconds without a file change before a push (at most 5).", valueName: "SECONDS"))
    var settle: Double = 0.1
    @Option(
        help: ArgumentHelp(
            "Seconds between pulls of every query when the server offers no change feed.", valueName: "SECONDS"))
    var pollInterval: Double = 30
    @Option(
        help: ArgumentHelp(
            """
            Scan the store every SECONDS instead of following file events (for a file system without inotify, such as \
            NFS).
            """,
            valueName: "SECONDS"))
    var scanInterval: Double?
    @Flag(
        inversion: .prefixedNo,
        help:
            """
            Commit the store's own files after a quiet period with changes, and on stop (default: commitAfterSync in \
            tablesync.json).
            """
    )
    var commit: Bool?
    @Option(
        help: ArgumentHelp(
            "Seconds without a run that changed the store before --commit commits.", valueName: "SECONDS"))
    var quietPeriod: Double = 60

    func validate() throws {
        guard settle >= 0, settle <= 5 else { throw ValidationError("--settle must be between 0 and 5 seconds") }
        guard pollInterval >= 1 else { throw ValidationError("--poll-interval must be at least 1 second") }
        if let scanInterval, scanInterval < 0.1 {
            throw ValidationError("--scan-interval must be at least 0.1 second")
        }
        guard quietPeriod >= 0 else { throw ValidationError("--quiet-period must not be negative") }
    }

    func run() async throws {
        let opened = try await SyncContext.open(directory: global.store, mode: .readOnly)
        let committing = commit ?? opened.settings.commitAfterSync
        let repository = committing ? await opened.gitRepository() : nil
        if committing && repository == nil {
            CommandOutput.printError(
                "tablesync: \(opened.layout.root) is not in a git work tree; nothing will be committed")
        }
        let output = WatchOutput(json: global.json)
        var settings = StoreWatcher.Settings()
        settings.timing = WatchTiming(settle: settle, maximumDelay: max(settle, 0.5), quietPeriod: quietPeriod)
        settings.pollInterval = pollInterval
        settings.scanInterval = scanInterval
        if let repository {
            settings.afterQuietPeriod = { context in try await output.commit(context: context, repository: repository) }
        }
        // Each run is told as an event when it ends; progress lines within runs would only repeat it.
        let options = server.syncOptions().with { $0.progress = nil }
        let watcher = StoreWatcher(directory: opened.layout.root, options: options, settings: settings)
        let signals = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { watcher.stop() }
            source.resume()
            return source
        }
        try await watcher.run { output.tell($0) }
        signals.forEach { $0.cancel() }
    }
}

/// How `watch` tells its events (log lines on standard error, or JSON lines on standard output), and what it has
/// synced since its last commit.
private final class WatchOutput: Sendable {
    let json: Bool
    private let logger: Logger
    /// What the runs since the last commit did, for the commit's message.
    private let sinceCommit = Mutex(SyncReport())

    init(json: Bool) {
        self.json = json
        var logger = Logger(label: "tablesync watch", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .info
        self.logger = logger
    }

    func tell(_ event: WatchEvent) {
        switch event {
        case .synced(let report): sinceCommit.withLock { $0.add(report) }
        case .pushed(let report): sinceCommit.withLock { $0.add(SyncReport(push: report)) }
        default: break
        }
        ProgressDisplay.standardError.clearLine()
        if json {
            var line = CanonicalJSON.encode(.object(Self.members(event)), style: .compact)
            line.append(UInt8(ascii: "\n"))
            FileHandle.standardOutput.write(Data(line))
        } else {
            switch event {
            case .failed, .feedLost, .commitFailed: logger.warning("\(TerminalText.escaped(Self.text(event)))")
            default: logger.info("\(TerminalText.escaped(Self.text(event)))")
            }
        }
    }

    /// Commits what the runs since the last commit changed, for ``StoreWatcher/Settings/afterQuietPeriod``.
    func commit(context: SyncContext, repository: GitRepository) async throws -> String? {
        let report = sinceCommit.withLock { $0 }
        let leftOut = report.push.pathsToLeaveOutOfCommits
        let subject = try await StoreCommit.commit(
            context: context, repository: repository,
            message: { SyncReportText.commitMessage(report, command: "tablesync watch", files: $0) },
            excluding: leftOut)
        sinceCommit.withLock { $0 = SyncReport() }
        return subject
    }

    /// The event as a log line's message.
    static func text(_ event: WatchEvent) -> String {
        switch event {
        case .started(let changeFeed, let fileEvents, let pollInterval):
            let pulls =
                changeFeed
                ? "pulls when the server's change feed says a table changed"
                : "pulls every query every \(Int(pollInterval)) s (the server offers no change feed)"
            let pushes = fileEvents ? "pushes on file events" : "pushes after scans at an interval"
            return "watching: \(pushes), \(pulls)"
        case .synced(let report): return SyncReportText.sync(report)
        case .pushed(let report): return SyncReportText.push(report) + "."
        case .failed(let error, let retryIn): return "run failed: \(error); again in \(seconds(retryIn))"
        case .feedLost(let error, let retryIn):
            return "change feed lost: \(error); asked again in \(seconds(retryIn)), then everything is pulled once"
        case .waitingForLock(let holder):
            return "waiting for the store's lock, held by \(holder.isEmpty ? "another run" : holder)"
        case .committed(let subject): return "committed: \(subject)"
        case .commitFailed(let reason): return "the commit could not be made: \(reason)"
        case .stopped: return "stopped"
        }
    }

    /// The event as a JSON object: `"event"` names it, the rest are its figures.
    static func members(_ event: WatchEvent) -> [String: JSONValue] {
        let name: String
        var members: [String: JSONValue] = [:]
        switch event {
        case .started(let changeFeed, let fileEvents, let pollInterval):
            name = "started"
            members = ["changeFeed": .bool(changeFeed), "fileEvents": .bool(fileEvents)]
            if !changeFeed { members["pollInterval"] = .double(pollInterval) }
        case .synced(let report):
            name = "synced"
            members = [
                "push": SyncReportText.pushJSON(report.push),
                "pulls": .object(report.pulls.mapValues(SyncReportText.pullJSON))
            ]
        case .pushed(let report):
            name = "pushed"
            members = ["push": SyncReportText.pushJSON(report)]
        case .failed(let error, let retryIn):
            name = "failed"
            members = ["error": .string(error.description), "retryIn": .double(retryIn)]
        case .feedLost(let error, let retryIn):
            name = "feedLost"
            members = ["error": .string(error.description), "retryIn": .double(retryIn)]
        case .waitingForLock(let holder):
            name = "waitingForLock"
            members = ["holder": .string(holder)]
        case .committed(let subject):
            name = "committed"
            members = ["subject": .string(subject)]
        case .commitFailed(let reason):
            name = "commitFailed"
            members = ["error": .string(reason)]
        case .stopped:
            name = "stopped"
        }
        members["event"] = .string(name)
        return members
    }

    private static func seconds(_ value: Double) -> String {
        value < 10 ? String(format: "%.1f s", value) : "\(Int(value.rounded())) s"
    }
}

extension SyncReport {
    /// A report whose push is `push`, with no pulls.
    init(push: PushReport) {
        self.init()
        self.push = push
    }

    /// Adds what `other` did: counts summed, lists joined, pulls summed by query.
    mutating func add(_ other: SyncReport) {
        push.add(other.push)
        for (id, pull) in other.pulls {
            var sum = pulls[id] ?? PullReport()
            sum.table = pull.table
            sum.written += pull.written
            sum.removed += pull.removed
            sum.unchanged += pull.unchanged
            sum.keptLocal += pull.keptLocal
            sum.pages += pull.pages
            sum.push.add(pull.push)
            pulls[id] = sum
        }
    }
}

extension PushReport {
    /// Adds what `other` did.
    mutating func add(_ other: PushReport) {
        applied += other.applied
        conflicts += other.conflicts
        rejected += other.rejected
        settledByPolicy += other.settledByPolicy
        problems += other.problems
        adoption.conflicts += other.adoption.conflicts
    }
}
