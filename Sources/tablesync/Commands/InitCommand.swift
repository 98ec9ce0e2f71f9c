import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync init`: creates a store.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a store in STORE (-C) or the current directory.",
        discussion:
            """
            Writes tablesync.json, queries.json (one query per table, named after it, pulling the whole table), an \
            empty journal.jsonl, tables/, the machine-local .tablesync/ cache (ignored by git) and .gitattributes; \
            inside a git work tree it also names the merge driver in the repository's config (see git-setup). The \
            token is never stored: use TABLESYNC_TOKEN, --token-file or --token-command.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "The server's base URL, e.g. http://127.0.0.1:8080.")
    var remote: String

    @Option(name: .customLong("table"), help: "A table to sync (repeat for several).")
    var tables: [String] = []

    @Option(
        help:
            """
            Table protocol version: 2 (Azure Mobile Apps) or 3 (Datasync) (default: learned from the server at the \
            first push or pull).
            """
    )
    var apiVersion: APIVersion?

    @Option(help: "What push does when the server's copy changed.")
    var conflictPolicy: StoreSettings.ConflictPolicy = .manual

    @Option(help: "A file outside the store holding the token (instead of TABLESYNC_TOKEN).")
    var tokenFile: String?

    @Option(
        help: ArgumentHelp(
            "A command that prints the token (instead of TABLESYNC_TOKEN or a token file), for tokens that expire.",
            discussion:
                """
                Run with /bin/sh -c when a request first needs a token, and again when the server refuses it; its \
                first line is the token.
                """,
            valueName: "COMMAND"))
    var tokenCommand: String?

    @Flag(inversion: .prefixedNo, help: "Add one query per table that pulls the whole table, so that sync pulls it.")
    var defaultQueries = true

    @Flag(
        help: "Commit the store's files to git after each sync that changed them (commitAfterSync in tablesync.json).")
    var commitAfterSync = false

    func validate() throws {
        // Checked here, as a flag: the same check on tablesync.json would name a field of a file not written yet.
        guard remote.hasPrefix("http://") || remote.hasPrefix("https://") else {
            throw ValidationError(
                "--remote must be an http:// or https:// URL, as in http://127.0.0.1:8080; found \"\(remote)\"")
        }
    }

    func run() async throws {
        let settings = StoreSettings(
            remote: remote, apiVersion: apiVersion?.rawValue, tables: tables,
            conflictPolicy: conflictPolicy, tokenFile: tokenFile, tokenCommand: tokenCommand,
            commitAfterSync: commitAfterSync)
        let context = try SyncContext.initialize(
            directory: global.store, settings: settings, queryPerTable: defaultQueries)
        let root = context.layout.root
        let repository = GitRepository.containing(store: root)
        try repository?.configureMergeDriver()
        let queries = defaultQueries ? settings.tables : []
        if global.json {
            CommandOutput.printJSON([
                "store": .string(root), "tables": .array(settings.tables.map { .string($0) }),
                "queries": .array(queries.map { .string($0) }), "gitMergeDriver": .bool(repository != nil)
            ])
        } else {
            var text =
                """
                Initialized TableSync store in \(root) (tables: \
                \(settings.tables.isEmpty ? "none yet" : settings.tables.joined(separator: ", ")))
                """
            if !queries.isEmpty { text += "; sync pulls each table whole (queries \(queries.joined(separator: ", ")))" }
            if repository != nil { text += "; git merges its files with tablesync merge-file" }
            CommandOutput.printText(text + ".")
        }
    }
}
