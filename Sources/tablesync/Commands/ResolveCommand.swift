import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync resolve TABLE/ID`.
struct ResolveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Settle one conflict: keep the local change, take the server's copy, or discard the record."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The record, as TABLE/ID.") var record: String
    @Flag(help: "Keep the local change; the next push sends it on top of the server's version.") var keepLocal = false
    @Flag(help: "Drop the local change and take the server's copy.") var takeServer = false
    @Flag(help: "Drop the local change and the local record.") var discard = false

    func run() async throws {
        try await CommandOutput.run(json: global.json) {
            let choices: [(Bool, ConflictResolution)] = [(keepLocal, .keepLocal), (takeServer, .takeServer), (discard, .discard)]
            let chosen = choices.filter(\.0).map(\.1)
            guard chosen.count == 1 else { throw ValidationError("choose exactly one of --keep-local, --take-server, --discard") }
            guard let slash = record.firstIndex(of: "/") else { throw ValidationError("name the record as TABLE/ID") }
            let key = RecordKey(table: String(record[..<slash]), id: String(record[record.index(after: slash)...]))
            let context = try SyncContext(directory: global.store, purpose: "tablesync resolve")
            try await context.resolve(key, chosen[0])
            if global.json { CommandOutput.printJSON(["resolved": .string(key.description), "choice": .string(chosen[0].rawValue)]) } else { print("Resolved \(key) (\(chosen[0].rawValue)).") }
            return .done
        }
    }
}
