import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync update TABLE JSON`.
struct UpdateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Replace a record's content locally and queue its update.",
        discussion: "The JSON must carry the record's \"id\"; server-managed properties are kept from the record file."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: String
    @Argument(help: "The record as a JSON object with its id, or - to read it from standard input.") var record: String

    func run() async throws {
        try await RecordChange.run(global: global, table: table, recordText: record, verb: "update") {
            try await $0.update($1)
        }
    }
}
