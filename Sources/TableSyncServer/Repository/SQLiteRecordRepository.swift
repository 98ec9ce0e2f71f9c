import Foundation
import GRDB
import SyncProtocol

/// Records in a SQLite file through GRDB, in WAL mode: readers never block the writer.
///
/// Writes run in `BEGIN IMMEDIATE` transactions, which SQLite serialises across connections and processes;
/// that is the table write lock of ``RecordRepository``, so `updatedAt` order is commit order.
package final class SQLiteRecordRepository: RecordRepository {
    private let pool: DatabasePool
    /// The connections of bulk reads on idle threads, apart from the pool's.
    let bulkReadConnections: BulkReadConnections
    private let statementTimeout: Duration
    private let bulkReadPriority: BulkReadPriority
    private let metrics: ServerMetrics?
    /// The database file, for messages.
    private let path: String

    /// Opens (or creates) the database file at `path`; a page read runs at most `statementTimeout`, a bulk read
    /// (``ReadWeight``) at `bulkReadPriority`. `metrics` counts the bulk reads starved at the idle priority.
    package init(
        path: String, statementTimeout: Duration = ServerConfiguration.defaultStatementTimeout,
        bulkReadPriority: BulkReadPriority = .default, metrics: ServerMetrics? = nil
    ) throws {
        pool = try DatabasePool(path: path, configuration: Self.configuration())
        bulkReadConnections = BulkReadConnections(
            path: path, configuration: Self.configuration(),
            limit: max(2, ProcessInfo.processInfo.activeProcessorCount))
        self.statementTimeout = statementTimeout
        self.bulkReadPriority = bulkReadPriority
        self.metrics = metrics
        self.path = path
    }

    /// How every connection is set up: a writer waits up to 10 s for another's lock, and statements run at the
    /// priority of the server's other threads. GRDB's default quality of service, `.userInitiated`, runs them on
    /// threads at nice -2 on Linux, above the event loops and the task pool at 0, so a large page's read took the
    /// processor from the small requests' parsing and answering (docs/bench.md, "The server under attack"). Each
    /// connection gets `$filter`'s Unicode `tolower` and `toupper` (``UnicodeCaseFunctions``).
    static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.qos = .default
        configuration.prepareDatabase { db in UnicodeCaseFunctions.register(on: db) }
        return configuration
    }

    package func prepare(tables: [TableOptions]) async throws {
        try await pool.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                let hasFormat =
                    try Bool.fetchOne(
                        db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        arguments: [DatabaseFormat.table]) == true
                if hasFormat,
                    let found = try Int.fetchOne(
                        db, sql: "SELECT max(\(DatabaseFormat.column)) FROM \(DatabaseFormat.table)"),
                    !DatabaseFormat.accepts(found: found)
                {
                    throw DatabaseFormat.refusal(found: found, database: path)
                }
                try Self.unclusterRecordsTable(db)
                for statement in RecordColumns.schema(.sqlite) { try db.execute(sql: statement.sql) }
                for statement in DatabaseFormat.recordCurrent { try db.execute(sql: statement) }
                for table in tables {
                    try Self.execute(RecordWriteSQL.registerClock(of: table.name, dialect: .sqlite), db)
                    try Self.prepareColumns(db, table: table)
                }
                let indexNames = tables.flatMap { table in
                    (table.schema?.columns ?? []).map { DeclaredColumnSQL.indexName(table: table.name, column: $0) }
                }
                if !indexNames.isEmpty {
                    try db.execute(sql: SQLitePlannerStatistics.load)
                    for (index, stat) in SQLitePlannerStatistics.rows(indexNames: indexNames) {
                        try db.execute(
                            sql: SQLitePlannerStatistics.insertUnlessPresent,
                            arguments: [RecordColumns.recordsTable, index, stat, RecordColumns.recordsTable, index])
                    }
                    try db.execute(sql: SQLitePlannerStatistics.load)
                }
                return .commit
            }
        }
    }

    /// Rebuilds a records table made `WITHOUT ROWID` (by 0.1.0 and until the start that first does this) as the
    /// ordinary table ``RecordColumns/createRecordsTable(_:named:)`` makes, with the same rows and indexes, as SQLite
    /// changes a table's layout: a new table, the rows copied, the old one dropped, the new one renamed, the indexes
    /// made again. In the start's transaction, so a start that fails leaves the table as it was.
    static func unclusterRecordsTable(_ db: Database) throws {
        let table = RecordColumns.recordsTable
        guard
            let sql = try String.fetchOne(
                db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [table]),
            sql.uppercased().contains("WITHOUT ROWID")
        else { return }
        let indexes = try String.fetchAll(
            db, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
            arguments: [table])
        let rebuilt = "\(table)_rebuilt"
        try db.execute(sql: "DROP TABLE IF EXISTS \(rebuilt)")
        try db.execute(sql: RecordColumns.createRecordsTable(.sqlite, named: rebuilt))
        let allColumns = RecordColumns.recordsColumns
        try db.execute(sql: "INSERT INTO \(rebuilt) (\(allColumns)) SELECT \(allColumns) FROM \(table)")
        try db.execute(sql: "DROP TABLE \(table)")
        try db.execute(sql: "ALTER TABLE \(rebuilt) RENAME TO \(table)")
        for index in indexes { try db.execute(sql: index) }
    }

    /// Follows the ``SchemaTransition`` of `table`: checks its rows against a new declaration, then its indexes.
    private static func prepareColumns(_ db: Database, table: TableOptions) throws {
        let stored = DeclarationSQL.stored(table: table.name, dialect: .sqlite)
        let storedText = try String.fetchOne(db, sql: stored.sql, arguments: arguments(stored.bindings))
        let transition = try SchemaTransition(table: table.name, storedText: storedText, declared: table.schema)
        if transition.checksRows {
            let statement = DeclarationSQL.rows(table: table.name, dialect: .sqlite)
            let rows = try Row.fetchCursor(db, sql: statement.sql, arguments: arguments(statement.bindings))
            while let row = try rows.next() {
                let id: String = row[0]
                let body: String = row[1]
                guard case .object(let properties) = try JSONParser.parse(body) else {
                    throw RepositoryError.corruptBody(id: id)
                }
                try transition.check(id: id, properties: properties)
            }
        }
        for statement in transition.dropStatements(dialect: .sqlite)
            + transition.indexes(dialect: .sqlite).map(\.create)
        { try db.execute(sql: statement) }
        guard transition.changed else { return }
        if let declared = table.schema {
            try execute(DeclarationSQL.store(table: table.name, text: declared.text, dialect: .sqlite), db)
        } else {
            try execute(DeclarationSQL.forget(table: table.name, dialect: .sqlite), db)
        }
    }

    package func record(in scope: RecordScope, id: String) async throws -> StoredRecord? {
        try await pool.read { db in try Self.fetchRecord(db, table: scope.storedName, id: id) }
    }

    /// Rows are stepped one at a time and each is decoded only when the page takes it, so a page that ends early
    /// reads no further.
    package func list<Collector: PageCollector>(
        in scope: RecordScope, query: ListQuery, into collector: Collector
    ) async throws -> ListedPage<Collector> {
        let statements = try RecordQuerySQL.list(table: scope.storedName, query: query, dialect: .sqlite)
        let (pool, priority, connections, metrics) = (self.pool, bulkReadPriority, bulkReadConnections, metrics)
        let deadline = ContinuousClock.now + statementTimeout
        @Sendable func readPage(
            _ db: Database, cancellation: IdlePriorityThread.Cancellation?
        ) throws
            -> ListedPage<Collector>
        {
            let limit = SQLiteDeadline(db, until: deadline, cancellation: cancellation)
            defer { limit.remove() }
            var reading = PageReading(collector: collector, top: query.top)
            let rows = try Row.fetchCursor(
                db, sql: statements.page.sql, arguments: Self.arguments(statements.page.bindings))
            while let row = try rows.next(), try reading.read({ try Self.decode(row) }) {}
            let count = try statements.count.map {
                try Int.fetchOne(db, sql: $0.sql, arguments: Self.arguments($0.bindings)) ?? 0
            }
            return reading.page(totalCount: count)
        }
        return try await StatementTimeLimit.run(statementTimeout) {
            if priority == .idle, IdlePriorityThread.isAvailable, ReadWeight.isBulk(query),
                let connection = connections.take()
            {
                // GRDB runs a synchronous read on the calling thread: the idle one.
                let page = try await IdlePriorityThread.run { cancellation in
                    defer { connections.giveBack(connection) }
                    return try connection.read { db in try readPage(db, cancellation: cancellation) }
                }
                if let page { return page }
                metrics?.bulkReadsStarved.increment()
                // Starved: other programs keep the processors busy. The read starts again at the normal priority,
                // on the pool, while the idle thread keeps its own connection until it runs and sees it was given up.
            }
            return try await pool.read { db in try readPage(db, cancellation: nil) }
        }
    }

    package func lastUpdatedAt(in scopes: [RecordScope]) async throws -> [Int64?] {
        try await pool.read { db in
            try scopes.map { scope in
                try Int64.fetchOne(
                    db.cachedStatement(sql: RecordQuerySQL.lastUpdatedAt(.sqlite)),
                    arguments: [scope.storedName])
            }
        }
    }

    package func write(_ writes: [RecordWriteRequest]) async throws -> [Result<StoredRecord?, any Error>] {
        let now = UpdatedAtClock.nowTicks()
        // BEGIN IMMEDIATE locks the whole database: every table's write lock at once.
        return try await pool.writeWithoutTransaction { db in
            var planner = RecordWritePlanner(nowTicks: now, count: writes.count)
            try db.inTransaction(.immediate) {
                planner = RecordWritePlanner(nowTicks: now, count: writes.count)
                for write in writes {
                    if planner.needsClock(of: write.table) {
                        let read = RecordWriteSQL.clock(of: write.table, dialect: .sqlite)
                        guard
                            let last = try Int64.fetchOne(
                                db.cachedStatement(sql: read.sql), arguments: Self.arguments(read.bindings))
                        else { throw RepositoryError.unknownTable(write.table) }
                        planner.readClock(of: write.table, last: last)
                    }
                    let rows = write.scope.storedName
                    let existing = try Self.fetchRecord(db, table: rows, id: write.id)
                    guard let plan = try planner.plan(write, existing: existing) else { continue }
                    do {
                        // One statement per write: a refused one is undone alone and the transaction goes on.
                        if let change = plan.change {
                            try Self.execute(RecordWriteSQL.statement(change, rows: rows, dialect: .sqlite), db)
                        }
                        planner.stored(plan)
                    } catch let error where DatabaseFailure(error)?.isCausedByRequest == true {
                        planner.refused(error)
                    }
                }
                for (table, last) in planner.movedClocks {
                    try Self.execute(RecordWriteSQL.setClock(of: table, to: last, dialect: .sqlite), db)
                }
                return .commit
            }
            return planner.results
        }
    }

    /// Runs `statement`, kept prepared on the connection for the next time.
    private static func execute(_ statement: SQLStatement, _ db: Database) throws {
        try db.cachedStatement(sql: statement.sql).execute(arguments: arguments(statement.bindings))
    }

    private static func fetchRecord(_ db: Database, table: String, id: String) throws -> StoredRecord? {
        try Row.fetchOne(
            db.cachedStatement(
                sql:
                    """
                    SELECT \(RecordQuerySQL.selectColumns(.sqlite)) FROM \(RecordColumns.recordsTable) WHERE \
                    \(RecordColumns.tableName) = ? AND \(RecordColumns.id) = ?
                    """
            ),
            arguments: [table, id]
        ).map(decode)
    }

    private static func decode(_ row: Row) throws -> StoredRecord {
        let bodyText: String = row[4]
        guard case .object(let properties) = try JSONParser.parse(bodyText) else {
            throw RepositoryError.corruptBody(id: row[0])
        }
        return StoredRecord(id: row[0], createdAt: row[1], updatedAt: row[2], deleted: row[3], properties: properties)
    }

    static func arguments(_ bindings: [SQLValue]) -> StatementArguments {
        StatementArguments(
            bindings.map { value -> DatabaseValue in
                switch value {
                case .null: return .null
                case .bool(let flag): return flag.databaseValue
                case .integer(let integer): return integer.databaseValue
                case .double(let double): return double.databaseValue
                case .text(let text): return text.databaseValue
                }
            })
    }
}

/// A stored row that cannot be turned back into a record (only possible after outside edits to the database).
package enum RepositoryError: Error, Sendable, CustomStringConvertible {
    case corruptBody(id: String)
    /// A write to a table that ``RecordRepository/prepare(tables:)`` did not register.
    case unknownTable(String)
    /// A repository answered a write with no result (a bug in the repository).
    case missingResult

    package var description: String {
        switch self {
        case .corruptBody(let id): return "the stored body of record '\(id)' is not a JSON object"
        case .unknownTable(let table): return "the table '\(table)' was not prepared"
        case .missingResult: return "the repository returned no result for a write"
        }
    }
}
