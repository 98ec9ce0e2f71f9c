import SyncProtocol
/// How one table is served.
///
/// On the command line: `--table NAME[:option=value,...]`, for example
/// `--table todo:pageSize=100,maxTop=1000,softDelete=true` or, with declared columns,
/// `--table 'todo:columns=text:string;done:boolean;due:date;rank:number'`; with access rules and rows per user,
/// `--table todo:perUser=true,read=authenticated,write=role:editor`.
public struct TableOptions: Sendable, Hashable {
    /// The table name in URLs (`/tables/{name}`), matched without regard to case as Azure's servers do.
    public var name: String
    /// `true` (the default): DELETE marks a record `deleted` so that incremental pulls see it go.
    /// `false`: DELETE removes the row.
    public var softDelete: Bool
    /// Records per page when the client gives no `$top`; `nil` uses the protocol's default (50 in v2, 100 in v3).
    public var pageSize: Int?
    /// The largest `$top` accepted; above it the request fails with 400.
    public var maxTop: Int
    /// The declared columns; `nil` (the default) for a schemaless table, whose records hold any properties.
    public var schema: TableSchema?
    /// Who may read (GET); `nil`: ``TableAccess/authenticated`` when the server checks credentials, else
    /// ``TableAccess/anonymous``.
    public var read: TableAccess?
    /// Who may write (POST, PATCH, PUT, DELETE, batch operations); `nil` as for ``read``.
    public var write: TableAccess?
    /// `true`: each record belongs to the user who inserted it (the credentials' subject), and every request sees
    /// and changes only its own user's records (``RecordScope``).
    public var perUser = false

    /// The default of ``maxTop``.
    public static let defaultMaxTop = 1000

    /// The options of the table `name`: soft delete, the server's page size and ``defaultMaxTop`` unless given,
    /// no declared columns, the server's access rules, shared by every user.
    public init(
        name: String, softDelete: Bool = true, pageSize: Int? = nil, maxTop: Int = defaultMaxTop,
        schema: TableSchema? = nil,
        read: TableAccess? = nil, write: TableAccess? = nil, perUser: Bool = false
    ) {
        self.name = name
        self.softDelete = softDelete
        self.pageSize = pageSize
        self.maxTop = maxTop
        self.schema = schema
        self.read = read
        self.write = write
        self.perUser = perUser
    }

    /// `true` when `name` can be a table name (``TableName``: 1–64 ASCII letters, digits, `_` or `-`, starting
    /// with a letter).
    package static func isValidName(_ name: String) -> Bool { TableName.isValid(name) }

    /// Parses `NAME[:key=value,...]` as given to `--table`.
    package static func parse(_ text: String) throws(ConfigurationError) -> TableOptions {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(parts[0])
        guard isValidName(name) else {
            throw ConfigurationError(
                "--table \(text): a table name is 1–64 letters, digits, _ or -, starting with a letter")
        }
        var options = TableOptions(name: name)
        guard parts.count == 2 else { return options }
        for setting in parts[1].split(separator: ",") {
            let pair = setting.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else {
                throw ConfigurationError("--table \(text): expected key=value, found '\(setting)'")
            }
            try options.set(pair[0], to: pair[1], context: "--table \(text)")
        }
        return options
    }

    /// Sets the option `key` from its text form; `context` names where it came from in errors.
    mutating func set(_ key: String, to value: String, context: String) throws(ConfigurationError) {
        switch key {
        case "softDelete":
            guard let flag = Bool(value) else {
                throw ConfigurationError("\(context): softDelete must be true or false")
            }
            softDelete = flag
        case "pageSize":
            guard let size = Int(value), size >= 1 else {
                throw ConfigurationError("\(context): pageSize must be a whole number ≥ 1")
            }
            pageSize = size
        case "maxTop":
            guard let top = Int(value), top >= 1 else {
                throw ConfigurationError("\(context): maxTop must be a whole number ≥ 1")
            }
            maxTop = top
        case "read", "write":
            guard let access = TableAccess(parsing: value) else {
                throw ConfigurationError(
                    "\(context): \(key) must be anonymous, authenticated, role:NAME or disabled, not '\(value)'")
            }
            if key == "read" { read = access } else { write = access }
        case "perUser":
            guard let flag = Bool(value) else { throw ConfigurationError("\(context): perUser must be true or false") }
            perUser = flag
        case "columns":
            do {
                schema = try TableSchema(parsing: value)
            } catch {
                throw ConfigurationError("\(context): columns: \(error.message)")
            }
        default:
            throw ConfigurationError(
                """
                \(context): unknown table option '\(key)'; use softDelete, pageSize, maxTop, columns, read, write or \
                perUser
                """
            )
        }
    }
}

extension TableOptions {
    /// Who may do `operation` on this table, when the server checks credentials (`checksCredentials`) or not.
    func access(for operation: TableOperation, checksCredentials: Bool) -> TableAccess {
        let given = operation == .read ? read : write
        return given ?? (checksCredentials ? .authenticated : .anonymous)
    }
}
