import ArgumentParser
import SyncProtocol
import TableSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the JSON object given on the command line (or `-` for standard input).
func parseRecordArgument(_ text: String) throws -> [String: JSONValue] {
    var bytes = Array(text.utf8)
    if text == "-" {
        bytes = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(0, &buffer, buffer.count)
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
    }
    let value: JSONValue
    do {
        value = try JSONParser.parse(bytes)
    } catch let error as JSONParseError {
        throw ValidationError("the record is not valid JSON: \(error)")
    }
    guard case .object(let record) = value else {
        throw ValidationError("the record must be a JSON object, not \(value.typeName)")
    }
    return record
}

/// Runs a change to one record given as JSON on the command line, and prints the record as stored.
func runRecordChange(global: GlobalOptions, table: String, recordText: String, verb: String,
                     change: @escaping @Sendable (SyncTable, [String: JSONValue]) async throws -> [String: JSONValue]) async throws {
    try await CommandOutput.run(json: global.json) {
        let record = try parseRecordArgument(recordText)
        let context = try SyncContext(directory: global.store, purpose: "tablesync \(verb)")
        let stored = try await change(try await context.table(table), record)
        if global.json {
            CommandOutput.printJSON(.object(stored))
        } else {
            print("\(verb == "insert" ? "Inserted" : "Updated") \(table)/\(stored["id"]?.stringValue ?? "") (queued for push).")
        }
        return .done
    }
}

/// `tablesync insert TABLE JSON`.
struct InsertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "insert",
        abstract: "Add a record locally and queue its insert.",
        discussion: "Without an \"id\" the record gets a new one. Example: tablesync insert todo '{\"text\": \"Buy milk\"}'"
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: String
    @Argument(help: "The record as a JSON object, or - to read it from standard input.") var record: String

    func run() async throws {
        try await runRecordChange(global: global, table: table, recordText: record, verb: "insert") { try await $0.insert($1) }
    }
}

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
        try await runRecordChange(global: global, table: table, recordText: record, verb: "update") { try await $0.update($1) }
    }
}

/// `tablesync delete TABLE ID`.
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Remove a record locally and queue its delete."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The table.") var table: String
    @Argument(help: "The record's id.") var id: String

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let context = try SyncContext(directory: global.store, purpose: "tablesync delete")
            try await context.table(table).delete(id: id)
            if global.json {
                CommandOutput.printJSON(["deleted": .string("\(table)/\(id)")])
            } else {
                print("Deleted \(table)/\(id) (queued for push).")
            }
            return .done
        }
    }
}
