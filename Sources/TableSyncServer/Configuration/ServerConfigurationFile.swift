import Foundation
import SyncProtocol

/// The optional JSON configuration file of `tablesync-server` (`--config FILE`): one member for each
/// ``ServerSetting``, under its ``ServerSetting/key`` (the `jwt` object holds the members whose keys start `jwt.`).
/// Every member is optional; unknown members are refused, since a misspelt one would be silently ignored.
///
/// ```json
/// {
///   "host": "127.0.0.1", "port": 8080,
///   "database": "sqlite:server.sqlite",
///   "tables": ["todo:pageSize=100", {"name": "notes", "softDelete": false, "maxTop": 500},
///              {"name": "tasks", "columns": {"text": "string", "done": "boolean", "due": "date", "rank": "number"}}],
///   "tokensFile": "/etc/tablesync/tokens",
///   "jwt": {"issuer": "https://login.example.com/", "audience": "tablesync",
///           "jwks": "https://login.example.com/jwks.json", "hs256KeyFile": "/etc/tablesync/jwt-key",
///           "leeway": 60, "jwksRefreshInterval": 60, "roleClaim": "roles"},
///   "maxBodySize": 16777216, "maxPageBytes": 8388608, "maxBulkReads": 1, "bulkReadPriority": "idle",
///   "batch": true, "maxBatchOperations": 1000, "postgresPoolSize": 20
/// }
/// ```
/// Tokens and keys never go in this file's values; it may only name a tokens file and a key file.
package struct ServerConfigurationFile: Sendable {
    /// The members given, by setting key, each checked to be of its setting's type.
    let inputs: [String: SettingInput]

    /// A file that gives no setting.
    package init() { inputs = [:] }

    private init(inputs: [String: SettingInput]) { self.inputs = inputs }

    /// Reads and parses the file at `path`.
    package static func read(path: String) throws(ConfigurationError) -> ServerConfigurationFile {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw ConfigurationError("cannot read the configuration file \(path)")
        }
        return try parse(text, path: path)
    }

    /// Parses the file's text; `path` names it in errors.
    package static func parse(_ text: String, path: String) throws(ConfigurationError) -> ServerConfigurationFile {
        let value: JSONValue
        do {
            value = try JSONParser.parse(text)
        } catch {
            throw ConfigurationError("\(path): \(error)")
        }
        guard case .object(let members) = value else {
            throw ConfigurationError("\(path): the configuration must be a JSON object")
        }
        var inputs: [String: SettingInput] = [:]
        try collect(members, under: "", path: path, into: &inputs)
        return ServerConfigurationFile(inputs: inputs)
    }

    /// Adds the settings among `members`, the members of the object at `prefix` (`""`: the file's top level).
    private static func collect(
        _ members: [String: JSONValue], under prefix: String, path: String, into inputs: inout [String: SettingInput]
    ) throws(ConfigurationError) {
        let quotedPrefix = prefix.split(separator: ".").map { "\"\($0)\"" }.joined(separator: ".")
        for (name, member) in members {
            let key = prefix.isEmpty ? name : "\(prefix).\(name)"
            let quotedKey = quotedPrefix.isEmpty ? "\"\(name)\"" : "\(quotedPrefix).\"\(name)\""
            if let setting = ServerSetting.all.first(where: { $0.key == key }) {
                let input = SettingInput(.json(member, path: path), source: "\(path): \(quotedKey)")
                try setting.read(input)
                inputs[key] = input
            } else if ServerSetting.keys(under: prefix).contains(name) {
                guard case .object(let nested) = member else {
                    throw ConfigurationError("\(path): \(quotedKey) must be an object")
                }
                try collect(nested, under: key, path: path, into: &inputs)
            } else {
                let setting = prefix.isEmpty ? "setting" : "\(quotedPrefix) setting"
                throw ConfigurationError(
                    "\(path): unknown \(setting) \"\(name)\"; use \(listed(ServerSetting.keys(under: prefix)))")
            }
        }
    }

    /// `a, b or c`.
    static func listed(_ names: [String]) -> String {
        guard let last = names.last else { return "" }
        return names.count == 1 ? last : "\(names.dropLast().joined(separator: ", ")) or \(last)"
    }

    /// One table of the file's `tables`: the flag's text, or an object with its `name` and options.
    static func table(_ entry: JSONValue, path: String) throws(ConfigurationError) -> TableOptions {
        if let text = entry.stringValue { return try TableOptions.parse(text) }
        guard case .object(let members) = entry, let name = members["name"]?.stringValue, TableOptions.isValidName(name)
        else {
            throw ConfigurationError("\(path): each table is \"NAME[:options]\" or an object with a valid \"name\"")
        }
        var options = TableOptions(name: name)
        let context = "\(path): table \(name)"
        for (key, value) in members where key != "name" {
            let text: String
            switch (key, value) {
            case ("columns", .object(let columns)):
                options.schema = try schema(columns, context: context)
                continue
            case ("columns", .string(let given)), ("read", .string(let given)), ("write", .string(let given)):
                text = given
            case (_, .bool(let flag)): text = String(flag)
            case (_, .integer(let number)): text = String(number)
            case ("columns", _):
                throw ConfigurationError(
                    "\(context): \"columns\" must be an object such as {\"text\": \"string\", \"done\": \"boolean\"}")
            case ("read", _), ("write", _):
                throw ConfigurationError(
                    "\(context): \"\(key)\" must be a string: anonymous, authenticated, role:NAME or disabled")
            default: throw ConfigurationError("\(context): \"\(key)\" must be a boolean or a whole number")
            }
            try options.set(key, to: text, context: context)
        }
        return options
    }

    /// `{"name": "type", …}`: the object form of a table's `columns`.
    private static func schema(
        _ members: [String: JSONValue], context: String
    ) throws(ConfigurationError) -> TableSchema {
        do throws(ConfigurationError) {
            var columns: [DeclaredColumn] = []
            for (name, value) in members {
                guard let typeName = value.stringValue else {
                    throw ConfigurationError(
                        "the type of the column '\(name)' must be a string: string, number, boolean or date")
                }
                columns.append(
                    try DeclaredColumn(name: name, type: try TableSchema.type(named: typeName, column: name)))
            }
            return try TableSchema(columns: columns)
        } catch {
            throw ConfigurationError("\(context): columns: \(error.message)")
        }
    }
}
