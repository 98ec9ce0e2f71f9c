import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync log`.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "List the pending operations in the order push sends them.",
        discussion:
            """
            In a store kept in git, an operation another clone queued (it came with a merge) is marked: that clone \
            sends it, this one does not (`tablesync take-over` makes it this clone's).
            """
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, mode: .readOnly)
        let operations = await context.pendingOperations
        let sender = context.cloneSender
        if global.json {
            CommandOutput.printJSON(["pending": .array(operations.map(\.json))])
        } else if operations.isEmpty {
            CommandOutput.printText("No pending operations.")
        } else {
            for operation in operations {
                let base = operation.baseVersion.map { " (on version \($0))" } ?? ""
                let elsewhere = operation.isSent(by: sender) ? "" : " (queued in another clone, sent from there)"
                CommandOutput.printText(
                    String(operation.sequence).padding(6) + operation.kind.rawValue.padding(7)
                        + "\(operation.table)/\(operation.id)\(base)\(elsewhere)"
                )
            }
        }
    }
}
