import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync init`: creates a store.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a store in STORE (-C) or the current directory.",
        discussion: "Writes tablesync.json, queries.json, an empty journal.jsonl, tables/, the machine-local .tablesync/ cache (ignored by git) and a suggested .gitattributes. The token is never stored: use TABLESYNC_TOKEN or --token-file."
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "The server's base URL, e.g. http://127.0.0.1:8080.")
    var remote: String

    @Option(name: .customLong("table"), help: "A table to sync (repeat for several).")
    var tables: [String] = []

    @Option(help: "Table protocol version: 2 (Azure Mobile Apps) or 3 (Datasync) (default: learned from the server at the first push or pull).")
    var apiVersion: APIVersion?

    @Option(help: "What push does when the server's copy changed.")
    var conflictPolicy: StoreSettings.ConflictPolicy = .manual

    @Option(help: "A file outside the store holding the token (instead of TABLESYNC_TOKEN).")
    var tokenFile: String?

    func run() async throws {
        let settings = StoreSettings(remote: remote, apiVersion: apiVersion?.rawValue, tables: tables,
                                     conflictPolicy: conflictPolicy, tokenFile: tokenFile)
        let context = try SyncContext.initialize(directory: global.store, settings: settings)
        if global.json {
            CommandOutput.printJSON(["store": .string(context.layout.root), "tables": .array(settings.tables.map { .string($0) })])
        } else {
            print("Initialized TableSync store in \(context.layout.root) (tables: \(settings.tables.isEmpty ? "none yet" : settings.tables.joined(separator: ", "))).")
        }
    }
}
