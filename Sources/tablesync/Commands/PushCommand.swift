import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync push`.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Queue hand edits, then send pending operations to the server in order.",
        discussion:
            """
            Exits 3 when conflicts wait (see `tablesync conflicts`), 4 when the server is unreachable (nothing is \
            lost; retry later), 5 when credentials are refused, 2 when the server refuses the requests themselves (a \
            table it does not serve, a protocol version it does not speak: nothing is filed as a conflict).
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var server: ServerOptions

    func run() async throws {
        let options = server.syncOptions()
        let context = try await SyncContext.open(directory: global.store, purpose: "tablesync push")
        let report = try await context.push(options: options)
        ProgressDisplay.standardError.clearLine()
        if global.json {
            CommandOutput.printJSON(SyncReportText.pushJSON(report))
        } else {
            CommandOutput.printText(SyncReportText.push(report) + ".")
        }
        let status = SyncReportText.status(report)
        if status != .done { throw ExitCode(status) }
    }
}
