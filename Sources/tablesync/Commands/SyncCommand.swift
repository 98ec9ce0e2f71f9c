import ArgumentParser
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

    func validate() throws {
        if let pageSize, pageSize < 1 { throw ValidationError("--page-size must be at least 1") }
    }

    func run() async throws {
        let options = server.syncOptions(pageSize: pageSize, allowMassDelete: allowMassDelete)
        let context = try SyncContext(directory: global.store, purpose: "tablesync sync")
        let report = try await context.sync(options: options)
        ProgressDisplay.standardError.clearLine()
        if global.json {
            CommandOutput.printJSON([
                "push": SyncReportText.pushJSON(report.push),
                "pulls": .object(report.pulls.mapValues(SyncReportText.pullJSON)),
            ])
        } else {
            var lines = [SyncReportText.push(report.push)]
            for (id, pull) in report.pulls.sorted(by: { $0.key < $1.key }) { lines.append(SyncReportText.pull(pull.table, pull) + " (query \(id))") }
            print(lines.joined(separator: "; ") + ".")
        }
        let status = SyncReportText.status(report.push, pulls: Array(report.pulls.values))
        if status != .done { throw ExitCode(status) }
    }
}
