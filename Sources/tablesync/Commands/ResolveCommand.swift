import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync resolve TABLE/ID --keep-local|--take-server|--discard`.
struct ResolveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Settle one conflict: keep the local change, take the server's copy, or discard the record.",
        // The generated usage lists the three choices side by side, as if all three were needed.
        usage: "tablesync resolve [-C <STORE>] [--json] <TABLE/ID> --keep-local|--take-server|--discard",
        discussion:
            """
            `tablesync conflicts` lists the records waiting, with both sides. Give exactly one choice; the next push \
            sends what remains.
            """
    )

    @OptionGroup var global: GlobalOptions
    @Argument(
        help: ArgumentHelp("The record, as `tablesync conflicts` names it.", valueName: "TABLE/ID"),
        transform: RecordKey.init(tableSlashID:))
    var record: RecordKey
    @Flag var resolution: ConflictResolution

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, purpose: "tablesync resolve")
        try await context.resolve(record, resolution)
        if global.json {
            CommandOutput.printJSON(["resolved": .string(record.description), "choice": .string(resolution.rawValue)])
        } else {
            CommandOutput.printText("Resolved \(record) (\(resolution.rawValue)).")
        }
    }
}
