import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync insert TABLE JSON`.
struct InsertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "insert",
        abstract: "Add a record locally and queue its insert.",
        discussion:
            "Without an \"id\" the record gets a new one. Example: tablesync insert todo '{\"text\": \"Buy milk\"}'"
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: String
    @Argument(help: "The record as a JSON object, or - to read it from standard input.") var record: String

    func run() async throws {
        try await RecordChange.run(global: global, table: table, recordText: record, verb: "insert") {
            try await $0.insert($1)
        }
    }
}
