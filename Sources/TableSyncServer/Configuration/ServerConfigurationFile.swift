import SyncProtocol

/// The optional JSON configuration file of `tablesync-server` (`--config FILE`). Every member is optional;
/// flags given on the command line win over it.
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
///   "batch": true, "maxBatchOperations": 1000,
///   "postgresPoolSize": 20,
///   "headerTimeout": 10, "bodyTimeout": 60, "idleTimeout": 60, "maxConnections": 1000,
///   "statementTimeout": 30, "shutdownTimeout": 5, "databaseWait": 30,
///   "maxFilterDepth": 32, "maxFilterTerms": 500, "maxFilterGrowth": 16, "maxChangeWait": 30
/// }
/// ```
/// Tokens and keys never go in this file's values; it may only name a tokens file and a key file.
public struct ServerConfigurationFile: Sendable, Hashable {
    public var host: String?
    public var port: Int?
    public var database: String?
    public var tables: [TableOptions] = []
    public var tokensFile: String?
    /// The `jwt` object: how JSON Web Tokens are checked.
    public var jwt = JWTFileSettings()
    public var maxBodySize: Int?
    /// ``ServerConfiguration/maxPageBytes``.
    public var maxPageBytes: Int?
    /// ``ServerConfiguration/maxBulkReads``.
    public var maxBulkReads: Int?
    /// ``ServerConfiguration/bulkReadPriority``.
    public var bulkReadPriority: BulkReadPriority?
    /// `false` switches the batch extension off.
    public var batch: Bool?
    public var maxBatchOperations: Int?
    public var postgresPoolSize: Int?
    /// Seconds; ``ServerConfiguration/headerTimeout``.
    public var headerTimeout: Double?
    /// Seconds; ``ServerConfiguration/bodyTimeout``.
    public var bodyTimeout: Double?
    /// Seconds; ``ServerConfiguration/idleTimeout``.
    public var idleTimeout: Double?
    public var maxConnections: Int?
    /// Seconds; ``ServerConfiguration/statementTimeout``.
    public var statementTimeout: Double?
    /// Seconds; ``ServerConfiguration/shutdownTimeout``.
    public var shutdownTimeout: Double?
    /// Seconds; ``ServerConfiguration/databaseWait``.
    public var databaseWait: Double?
    public var maxFilterDepth: Int?
    public var maxFilterTerms: Int?
    public var maxFilterGrowth: Int?
    /// Whole seconds; ``ServerConfiguration/maxChangeWait``.
    public var maxChangeWait: Int?

    public init() {}

    /// Parses the file's text; `path` names it in errors.
    public static func parse(_ text: String, path: String) throws(ConfigurationError) -> ServerConfigurationFile {
        let value: JSONValue
        do {
            value = try JSONParser.parse(text)
        } catch {
            throw ConfigurationError("\(path): \(error)")
        }
        guard case .object(let members) = value else {
            throw ConfigurationError("\(path): the configuration must be a JSON object")
        }
        var file = ServerConfigurationFile()
        for (key, member) in members {
            func string() throws(ConfigurationError) -> String {
                guard let text = member.stringValue else {
                    throw ConfigurationError("\(path): \"\(key)\" must be a string")
                }
                return text
            }
            func integer() throws(ConfigurationError) -> Int {
                guard let number = member.integerValue else {
                    throw ConfigurationError("\(path): \"\(key)\" must be a whole number")
                }
                return Int(number)
            }
            func seconds() throws(ConfigurationError) -> Double {
                guard let number = member.doubleValue else {
                    throw ConfigurationError("\(path): \"\(key)\" must be a number of seconds")
                }
                return number
            }
            switch key {
            case "host": file.host = try string()
            case "port": file.port = try integer()
            case "database": file.database = try string()
            case "tokensFile": file.tokensFile = try string()
            case "jwt": file.jwt = try JWTFileSettings.parse(member, path: path)
            case "maxBodySize": file.maxBodySize = try integer()
            case "maxPageBytes": file.maxPageBytes = try integer()
            case "maxBulkReads": file.maxBulkReads = try integer()
            case "bulkReadPriority":
                file.bulkReadPriority = try BulkReadPriority.parse(try string(), setting: "\(path): \"\(key)\"")
            case "maxBatchOperations": file.maxBatchOperations = try integer()
            case "postgresPoolSize": file.postgresPoolSize = try integer()
            case "headerTimeout": file.headerTimeout = try seconds()
            case "bodyTimeout": file.bodyTimeout = try seconds()
            case "idleTimeout": file.idleTimeout = try seconds()
            case "maxConnections": file.maxConnections = try integer()
            case "statementTimeout": file.statementTimeout = try seconds()
            case "shutdownTimeout": file.shutdownTimeout = try seconds()
            case "databaseWait": file.databaseWait = try seconds()
            case "maxFilterDepth": file.maxFilterDepth = try integer()
            case "maxFilterTerms": file.maxFilterTerms = try integer()
            case "maxFilterGrowth": file.maxFilterGrowth = try integer()
            case "maxChangeWait": file.maxChangeWait = try integer()
            case "batch":
                guard let flag = member.boolValue else {
                    throw ConfigurationError("\(path): \"batch\" must be true or false")
                }
                file.batch = flag
            case "tables":
                guard case .array(let entries) = member else {
                    throw ConfigurationError("\(path): \"tables\" must be an array")
                }
                for entry in entries { file.tables.append(try table(entry, path: path)) }
            default:
                throw ConfigurationError(
                    """
                    \(path): unknown setting "\(key)"; use host, port, database, tables, tokensFile, jwt, maxBodySize, \
                    maxPageBytes, maxBulkReads, bulkReadPriority, batch, maxBatchOperations, postgresPoolSize, \
                    headerTimeout, bodyTimeout, idleTimeout, maxConnections, statementTimeout, shutdownTimeout, \
                    databaseWait, maxFilterDepth, maxFilterTerms, maxFilterGrowth or maxChangeWait
                    """)
            }
        }
        return file
    }

    private static func table(_ entry: JSONValue, path: String) throws(ConfigurationError) -> TableOptions {
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
