import SyncProtocol

/// Something about the store or a request against it is wrong; each case says where.
public enum StoreError: CategorizedError, Equatable {
    /// `path` is not a TableSync store (no `tablesync.json`).
    case notAStore(path: String)
    /// `tablesync init` on a directory that already is a store.
    case alreadyInitialized(path: String)
    /// A settings file (`tablesync.json`, `queries.json`) has a wrong or missing field.
    case invalidSettings(file: String, field: String, reason: String)
    /// A settings or journal file is not valid JSON.
    case invalidJSONFile(file: String, error: JSONParseError)
    /// A line of `journal.jsonl` is wrong.
    case invalidJournalLine(file: String, line: Int, reason: String)
    /// The table is not one of the store's tables.
    case unknownTable(String)
    /// A table name breaks the rule of `TableName` (SyncProtocol).
    case invalidTableName(String, reason: String)
    /// A record id breaks the rule of `RecordID` (SyncProtocol).
    case invalidRecordID(String, reason: String)
    /// A record given to insert or update is wrong.
    case invalidRecord(table: String, reason: String)
    /// No record with this id exists locally.
    case recordNotFound(table: String, id: String)
    /// A record with this id exists already.
    case recordExists(table: String, id: String)
    /// `resolve` named a record with no conflict waiting.
    case noConflict(RecordKey)
    /// The record file is broken; the change cannot be made until it is fixed.
    case brokenRecordFile(RecordFileProblem)
    /// The new operation cannot follow the one already pending for the record.
    case operationRejected(table: String, id: String, reason: String)
    /// A change was asked of a store opened read-only.
    case readOnly
    /// A pull query id or definition is wrong.
    case invalidQuery(id: String, reason: String)
    /// An environment variable that TableSync reads holds a value it does not accept.
    case invalidEnvironment(variable: String, value: String, accepted: [String])
    /// A file of the stat index under `.tablesync/index/` is damaged (the disk changed it after it was written).
    case damagedIndex(file: String, reason: String)
    /// `tablesync.json` names a store format newer than this binary reads (``found``; it reads up to ``supported``):
    /// a newer `tablesync` made or upgraded the store. Nothing was read further or changed.
    case newerStoreFormat(found: Int, supported: Int)

    /// Which kind of failure this is, for the command line's exit code.
    public var kind: FailureKind {
        switch self {
        case .invalidSettings, .invalidJSONFile, .invalidJournalLine, .brokenRecordFile, .damagedIndex:
            return .invalidStore
        // No store where the command was pointed: the command line is wrong, not a store.
        case .notAStore, .alreadyInitialized, .unknownTable, .invalidTableName, .invalidRecordID, .invalidRecord,
            .recordNotFound, .recordExists, .noConflict, .operationRejected, .readOnly, .invalidQuery,
            .invalidEnvironment, .newerStoreFormat:
            return .usage
        }
    }

    /// The error as one sentence that names the file, record or field and the fix.
    public var description: String {
        switch self {
        case .notAStore(let path):
            return "\(path) is not a TableSync store (no tablesync.json); run `tablesync init` there or pass -C STORE."
        case .alreadyInitialized(let path):
            return "\(path) is already a TableSync store (tablesync.json exists)."
        case .invalidSettings(let file, let field, let reason):
            return "\(file): field \"\(field)\": \(reason)."
        case .invalidJSONFile(let file, let error):
            return "\(file):\(error.line):\(error.column): \(error.reason)."
        case .invalidJournalLine(let file, let line, let reason):
            return "\(file):\(line): \(reason)."
        case .unknownTable(let table):
            return "table \"\(table)\" is not in this store; add it to \"tables\" in tablesync.json."
        case .invalidTableName(_, let reason):
            return "invalid table name: \(reason)."
        case .invalidRecordID(let id, let reason):
            return "invalid record id \"\(id)\": \(reason)."
        case .invalidRecord(let table, let reason):
            return "invalid record for table \(table): \(reason)."
        case .recordNotFound(let table, let id):
            return "no record \(table)/\(id) in the store."
        case .recordExists(let table, let id):
            return "record \(table)/\(id) exists already; use update to change it."
        case .noConflict(let key):
            return "no conflict waits for \(key); `tablesync conflicts` lists those that do."
        case .brokenRecordFile(let problem):
            return problem.description
        case .operationRejected(let table, let id, let reason):
            return "cannot change \(table)/\(id): \(reason)."
        case .readOnly:
            return "the store was opened read-only, or closed."
        case .invalidQuery(let id, let reason):
            return "query \"\(id)\": \(reason)."
        case .invalidEnvironment(let variable, let value, let accepted):
            return "\(variable)=\(value) is not understood; set it to \(accepted.joined(separator: ", ")), or unset it."
        case .newerStoreFormat(let found, let supported):
            return
                """
                \(StoreLayout.settingsFileName) says the store is format \(found), newer than the formats this \
                tablesync \(TableSyncVersion.current) reads (up to \(supported)): a newer tablesync made or upgraded \
                it; install that version (or a later one) to use it. Nothing was changed.
                """
        case .damagedIndex(let file, let reason):
            return
                """
                \(file): \(reason); the stat index is a cache: remove .tablesync/index/ and the next run rebuilds it \
                (every record file is read once, and a file holding a server copy is compared with the server before \
                anything of it is pushed).
                """
        }
    }
}
