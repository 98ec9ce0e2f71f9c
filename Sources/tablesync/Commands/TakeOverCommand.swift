import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync take-over [TABLE/ID ...]`.
struct TakeOverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "take-over",
        abstract: "Make operations another clone of the store queued this clone's to send.",
        discussion: """
            An operation that came with a merge belongs to the clone that queued it, which sends it and whose sync \
            commit takes it out of other journals; this clone leaves it alone (`tablesync log` marks it). When that \
            clone is gone, or its commit will not come, take its operations over: the next push sends them from here.
            """
    )

    @OptionGroup var global: GlobalOptions
    @Argument(
        help: ArgumentHelp(
            "The records whose operations to take over (all when none is named).", valueName: "TABLE/ID"),
        transform: RecordKey.init(tableSlashID:))
    var records: [RecordKey] = []

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, purpose: "tablesync take-over")
        let taken = try await context.takeOver(records.isEmpty ? nil : Set(records))
        if global.json {
            CommandOutput.printJSON(["takenOver": .array(taken.map { .string($0.key.description) })])
        } else {
            CommandOutput.printText(
                taken.isEmpty
                    ? "No operation queued in another clone."
                    : "Took over \(taken.count) operation(s): \(taken.map(\.key.description).joined(separator: ", ")).")
        }
    }
}
