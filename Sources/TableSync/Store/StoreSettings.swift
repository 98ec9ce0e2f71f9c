import SyncProtocol
import TableSyncStorage

/// What `tablesync.json` holds: settings people edit, never secrets.
///
/// ```json
/// {
///   "apiVersion": 3,
///   "conflictPolicy": "manual",
///   "remote": "http://127.0.0.1:8080",
///   "tables": {
///     "todo": {}
///   },
///   "tokenFile": "/home/me/.config/tablesync/token"
/// }
/// ```
///
/// or, for tokens that expire, `"tokenCommand": "oidc-token tablesync"`:
///
/// ```json
/// { "remote": "https://sync.example.com", "tables": { "todo": {} }, "tokenCommand": "oidc-token tablesync" }
/// ```
public struct StoreSettings: Sendable, Equatable {
    /// How push settles an operation the server refused because its copy changed.
    public enum ConflictPolicy: String, Sendable, CaseIterable {
        /// Keep the operation and the server's copy under `conflicts/` for a person to decide.
        case manual
        /// Take the server's copy and drop the local change.
        case serverWins = "server-wins"
        /// Send the local change again on top of the server's version.
        case clientWins = "client-wins"
    }

    /// The server's base URL (`http://host:port`, with the path prefix if any).
    public var remote: String
    /// The table protocol version to speak: 2 or 3; `nil` (no `"apiVersion"` in the file) learns it from the
    /// server at the first contact and keeps it in `.tablesync/protocol.json`.
    public var apiVersion: Int?
    /// The store's tables, sorted by name.
    public var tables: [String]
    /// The default conflict policy.
    public var conflictPolicy: ConflictPolicy
    /// A file outside the store that holds the client's token, when the token is not in `TABLESYNC_TOKEN`.
    public var tokenFile: String?
    /// A command whose output is the client's token (run with `/bin/sh -c` when a token is needed, and again when
    /// the server refuses it), when neither `TABLESYNC_TOKEN` nor ``tokenFile`` gives one (`ClientCredentials`).
    public var tokenCommand: String?
    /// Whether `tablesync sync` commits the store's own files to git after a sync that changed them
    /// (`"commitAfterSync"`; `sync --commit` / `--no-commit` decide for one run).
    public var commitAfterSync: Bool

    /// Settings for a store on `remote`; `apiVersion` `nil` learns the protocol version from the server.
    public init(
        remote: String, apiVersion: Int? = 3, tables: [String] = [], conflictPolicy: ConflictPolicy = .manual,
        tokenFile: String? = nil, tokenCommand: String? = nil, commitAfterSync: Bool = false
    ) {
        self.remote = remote
        self.apiVersion = apiVersion
        self.tables = tables.sorted()
        self.conflictPolicy = conflictPolicy
        self.tokenFile = tokenFile
        self.tokenCommand = tokenCommand
        self.commitAfterSync = commitAfterSync
    }

    /// Checks the settings, returning the first problem as an error naming the field.
    package func validate(file: String = StoreLayout.settingsFileName) throws {
        if let apiVersion, apiVersion != 2 && apiVersion != 3 {
            throw StoreError.invalidSettings(
                file: file, field: "apiVersion", reason: "expected 2 or 3, found \(apiVersion)")
        }
        guard remote.hasPrefix("http://") || remote.hasPrefix("https://") else {
            throw StoreError.invalidSettings(
                file: file, field: "remote", reason: "expected an http:// or https:// URL, found \"\(remote)\"")
        }
        var seen: [String: String] = [:]
        for table in tables {
            if let problem = TableName.problem(with: table) {
                throw StoreError.invalidSettings(file: file, field: "tables.\(table)", reason: problem)
            }
            if let other = seen[table.lowercased()] {
                throw StoreError.invalidSettings(
                    file: file, field: "tables.\(table)",
                    reason: "differs from table \"\(other)\" only in case; they would share a directory on macOS")
            }
            seen[table.lowercased()] = table
        }
        if tokenFile != nil && tokenCommand != nil {
            throw StoreError.invalidSettings(
                file: file, field: "tokenCommand",
                reason: "name one source of the token, tokenFile or tokenCommand, not both")
        }
        if let tokenCommand, tokenCommand.trimmingWhitespace().isEmpty {
            throw StoreError.invalidSettings(
                file: file, field: "tokenCommand", reason: "expected a command, found an empty string")
        }
    }

    /// Reads and checks `tablesync.json`.
    static func load(from bytes: [UInt8], file: String) throws -> StoreSettings {
        let reader = try SettingsReader(file: file, bytes: bytes)
        let policyText = try reader.optionalString("conflictPolicy") ?? ConflictPolicy.manual.rawValue
        guard let policy = ConflictPolicy(rawValue: policyText) else {
            throw reader.failure(
                "conflictPolicy",
                """
                expected one of \(ConflictPolicy.allCases.map(\.rawValue).joined(separator: ", ")), found \
                \"\(policyText)\"
                """
            )
        }
        let settings = StoreSettings(
            remote: try reader.string("remote"),
            apiVersion: try reader.optionalInteger("apiVersion"),
            tables: try reader.objectMembers("tables").map(\.key),
            conflictPolicy: policy,
            tokenFile: try reader.optionalString("tokenFile"),
            tokenCommand: try reader.optionalString("tokenCommand"),
            commitAfterSync: try reader.optionalBool("commitAfterSync") ?? false
        )
        try settings.validate(file: file)
        return settings
    }

    /// The canonical JSON of these settings, in this binary's store format (``StoreFormat``).
    var json: JSONValue {
        var members: [String: JSONValue] = [
            StoreFormat.settingsKey: .integer(Int64(StoreFormat.current)),
            "remote": .string(remote),
            "conflictPolicy": .string(conflictPolicy.rawValue),
            "tables": .object(Dictionary(uniqueKeysWithValues: tables.map { ($0, JSONValue.object([:])) }))
        ]
        if let apiVersion { members["apiVersion"] = .integer(Int64(apiVersion)) }
        if let tokenFile { members["tokenFile"] = .string(tokenFile) }
        if let tokenCommand { members["tokenCommand"] = .string(tokenCommand) }
        if commitAfterSync { members["commitAfterSync"] = .bool(true) }
        return .object(members)
    }
}
