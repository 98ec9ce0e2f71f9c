import ArgumentParser
import Foundation
import SyncProtocol
import TableSync

/// `tablesync sync`.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Push, then pull every query in queries.json. The command for cron.",
        discussion: """
            One run at a time per store: a second run exits 6 at once. Exit codes: 0 done, 2 the server refuses the \
            requests themselves (see the message), 3 conflicts waiting, 4 server unreachable (retry later), \
            5 credentials refused, 6 locked, 7 broken files, 8 server records the store cannot hold were skipped \
            (see status), 9 git's state stops the run (a merge under way, HEAD behind the last sync), 10 the sync is \
            done but its commit could not be made.
            cron: */5 * * * * cd /srv/store && tablesync sync >>/var/log/tablesync.log 2>&1
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var server: ServerOptions
    @Option(
        help:
            "Records asked per pull request (default 1000); stepped down when the server refuses the size, as for pull."
    ) var pageSize: Int?
    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            """
            Commit the store's own files to git after a sync that changed them (default: commitAfterSync in \
            tablesync.json).
            """,
            discussion:
                """
                Only the store's paths are committed; anything else staged stays staged. Outside a git work tree \
                nothing is committed.
                """
        ))
    var commit: Bool?

    func validate() throws {
        if let pageSize, pageSize < 1 { throw ValidationError("--page-size must be at least 1") }
    }

    func run() async throws {
        let options = server.syncOptions(pageSize: pageSize)
        let context = try await SyncContext.open(directory: global.store, purpose: "tablesync sync")
        let committing = commit ?? context.settings.commitAfterSync
        let repository = committing ? await context.gitRepository() : nil
        // During a merge the sync itself is refused (``GitStateRefused``), before anything is sent or staged.
        let report = try await context.sync(options: options)
        if report.pulls.isEmpty && !global.json {
            CommandOutput.printError(
                "tablesync: nothing to pull: queries.json has no query (add one: tablesync query add TABLE QUERY_ID)")
        }
        ProgressDisplay.standardError.clearLine()
        var commitFailure: String?
        var committed: String?
        if committing {
            do {
                committed = try await commitStore(context: context, repository: repository, report: report)
            } catch {
                commitFailure = "\(error)"
            }
        }
        if global.json {
            var members: [String: JSONValue] = [
                "push": SyncReportText.pushJSON(report.push),
                "pulls": .object(report.pulls.mapValues(SyncReportText.pullJSON))
            ]
            if committing {
                members["commit"] =
                    commitFailure.map { ["error": .string($0)] } ?? committed.map { ["subject": .string($0)] } ?? .null
            }
            CommandOutput.printJSON(.object(members))
        } else {
            CommandOutput.printText(SyncReportText.sync(report))
            if let committed { CommandOutput.printText("Committed: \(committed)") }
        }
        if let commitFailure {
            CommandOutput.printError("tablesync: the sync is done, but its commit could not be made: \(commitFailure)")
            throw ExitCode(.commitFailed)
        }
        let status = SyncReportText.status(report.push, pulls: Array(report.pulls.values))
        if status != .done { throw ExitCode(status) }
    }

    /// Commits the store's files after the sync, when it changed them, leaving out the files it could not read (those
    /// holding conflict markers among them) and editors' leftovers
    /// (``GitRepository/commitStore(paths:excluding:message:)``); returns the commit's subject, or `nil` when nothing
    /// changed. The commit then counts as the store's last sync.
    private func commitStore(
        context: SyncContext, repository: GitRepository?, report: SyncReport
    ) async throws -> String? {
        guard let repository else {
            CommandOutput.printError("tablesync: \(context.layout.root) is not in a git work tree; nothing committed")
            return nil
        }
        let leftOut = report.push.pathsToLeaveOutOfCommits
        return try await StoreCommit.commit(
            context: context, repository: repository, message: { SyncReportText.commitMessage(report, files: $0) },
            excluding: leftOut)
    }
}
