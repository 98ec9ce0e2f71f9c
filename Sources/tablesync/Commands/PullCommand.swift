import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync pull TABLE`.
struct PullCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "Push TABLE's pending operations, then fetch what changed on the server.",
        discussion:
            """
            With --query-id the pull is incremental from the query's saved watermark (the query is created on first \
            use); without it, everything matching --filter is fetched. Records with local changes are never \
            overwritten; records deleted on the server are removed.
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var server: ServerOptions
    @Argument(help: "The table.") var table: String
    @Option(help: "The query id whose watermark makes the pull incremental.") var queryID: String?
    @Option(help: "An OData $filter limiting what is pulled.") var filter: String?
    @Option(
        help:
            """
            Records asked per request (default 1000). A server that refuses the size is asked again with the largest \
            it names, or with 500, 250, 100, 50, 25, 10 in turn; shorter pages than asked are followed to the end.
            """
    ) var pageSize: Int?
    @Flag(help: "Also remove local records that no longer match the query's filter (unless they have local changes).")
    var evict = false

    func validate() throws {
        if let pageSize, pageSize < 1 { throw ValidationError("--page-size must be at least 1") }
    }

    func run() async throws {
        let options = server.syncOptions(pageSize: pageSize, evict: evict)
        let context = try await SyncContext.open(directory: global.store, purpose: "tablesync pull")
        let report = try await context.pull(table: table, queryID: queryID, filter: filter, options: options)
        ProgressDisplay.standardError.clearLine()
        if global.json {
            CommandOutput.printJSON(SyncReportText.pullJSON(report))
        } else {
            CommandOutput.printText(SyncReportText.push(report.push) + "; " + SyncReportText.pull(table, report) + ".")
        }
        let status = SyncReportText.status(report.push, pulls: [report])
        if status != .done { throw ExitCode(status) }
    }
}
