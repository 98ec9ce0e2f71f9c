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
            (see status).
            cron: */5 * * * * cd /srv/store && tablesync sync >>/var/log/tablesync.log 2>&1
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var server: ServerOptions
    @Option(help: "Records asked per pull request (default 1000); stepped down when the server refuses the size, as for pull.") var pageSize: Int?
    @Flag(help: "Allow a pull to remove more than half of a table's local records.") var allowMassDelete = false
    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Commit the store's own files to git after a sync that changed them (default: commitAfterSync in tablesync.json).",
        discussion: "Only the store's paths are committed; anything else staged stays staged. Outside a git work tree nothing is committed."))
    var commit: Bool?

    func validate() throws {
        if let pageSize, pageSize < 1 { throw ValidationError("--page-size must be at least 1") }
    }

    func run() async throws {
        let options = server.syncOptions(pageSize: pageSize, allowMassDelete: allowMassDelete)
        let context = try SyncContext(directory: global.store, purpose: "tablesync sync")
        let report = try await context.sync(options: options)
        if report.pulls.isEmpty && !global.json {
            FileHandle.standardError.write(Data("tablesync: nothing to pull: queries.json has no query (add one: tablesync query add TABLE QUERY_ID)\n".utf8))
        }
        ProgressDisplay.standardError.clearLine()
        if global.json {
            CommandOutput.printJSON([
                "push": SyncReportText.pushJSON(report.push),
                "pulls": .object(report.pulls.mapValues(SyncReportText.pullJSON)),
            ])
        } else {
            print(SyncReportText.sync(report))
        }
        if commit ?? context.settings.commitAfterSync { try commitStore(root: context.layout.root, report: report) }
        let status = SyncReportText.status(report.push, pulls: Array(report.pulls.values))
        if status != .done { throw ExitCode(status) }
    }

    /// Commits the store's files after the sync, when it changed them (``GitRepository/commit(paths:message:)``).
    private func commitStore(root: String, report: SyncReport) throws {
        guard let repository = GitRepository.containing(store: root) else {
            FileHandle.standardError.write(Data("tablesync: \(root) is not in a git work tree; nothing committed\n".utf8))
            return
        }
        let message = SyncReportText.commitMessage(report)
        do {
            if try repository.commit(paths: StoreLayout.versionedPaths, message: message), !global.json {
                print("Committed: \(message.prefix { $0 != "\n" })")
            }
        } catch {
            throw CommitFailed(reason: "\(error)")
        }
    }
}

/// The sync was done but its commit failed.
struct CommitFailed: CategorizedError {
    var reason: String
    var kind: FailureKind { .other }
    var description: String { "the sync is done, but committing the store to git failed: \(reason)" }
}
