import Logging
import PostgresNIO
import Synchronization
import SyncProtocol

/// Records in PostgreSQL through PostgresNIO: bodies as `jsonb`, dates as `bigint` ticks.
///
/// Each write transaction first updates its tables' clock rows (``RecordWriteSQL/clock(of:dialect:)``, in table
/// name order), which holds those rows' locks until commit. Writers of one table therefore run one after another,
/// each assigning `updatedAt = max(now, last + 1 ms)` under the lock (``UpdatedAtClock``), and PostgreSQL makes a
/// transaction visible before it releases its locks: commit order is `updatedAt` order, with any number of
/// concurrent writers or servers.
package final class PostgresRecordRepository: RecordRepository {
    private let logger: Logger
    private let statementTimeout: Duration
    private let canceller: PostgresStatementCanceller?
    /// The pool, as requests lease its connections.
    private let pool: PostgresPoolUse
    /// The tables whose small pages are read through a cursor (``OneStatementPage``).
    let largeRecordTables = LargeRecordTables()

    /// A repository over `client`, which must be running (its owner runs it); a page read runs at most
    /// `statementTimeout` in all, however many statements it takes. With the database's `location`, a page read that
    /// is cancelled has its statement cancelled in the database at once; without, its connection is closed, and the
    /// database ends the statement when it notices. `metrics` counts the pool's connections in use.
    package convenience init(
        client: PostgresClient, logger: Logger,
        statementTimeout: Duration = ServerConfiguration.defaultStatementTimeout,
        location: PostgresLocation? = nil, poolSize: Int = ServerConfiguration.defaultPostgresPoolSize,
        metrics: ServerMetrics? = nil
    ) throws(ConfigurationError) {
        try self.init(
            pools: PostgresPools(running: client, logger: logger), logger: logger, statementTimeout: statementTimeout,
            location: location, poolSize: poolSize, metrics: metrics)
    }

    /// A repository over the pools of `pools`, which runs them (a service of the server application) and replaces
    /// the pool when the database goes away and comes back.
    init(
        pools: PostgresPools, logger: Logger, statementTimeout: Duration, location: PostgresLocation?, poolSize: Int,
        metrics: ServerMetrics?
    ) throws(ConfigurationError) {
        pool = PostgresPoolUse(
            pools: pools, inUse: metrics?.databaseConnectionsInUse, awaited: metrics?.databaseConnectionsAwaited)
        self.logger = logger
        self.statementTimeout = statementTimeout
        canceller = try location.map { location throws(ConfigurationError) in
            try PostgresStatementCanceller(location: location, poolSize: poolSize, logger: logger)
        }
    }

    /// Prepares in two steps under a session advisory lock, so that starts on one database run one at a time:
    /// a transaction creates the schema, checks the rows of changed declarations and stores them; then the
    /// declared columns' indexes are created and the old ones dropped `CONCURRENTLY`, which blocks neither the
    /// reads nor the writes of servers already running on the database (a plain `CREATE INDEX` holds their writes,
    /// and a lock taken while their transactions wait on each other can stall them all).
    package func prepare(tables: [TableOptions]) async throws {
        let logger = self.logger
        try await pool.withConnection { connection in
            // Index builds may take longer than a request's statement limit; RESET restores the connection's own.
            try await connection.query("SET statement_timeout = 0", logger: logger)
            try await Self.takeStartLock(on: connection, logger: logger)
            do {
                let transitions = try await Self.prepareInTransaction(tables: tables, on: connection, logger: logger)
                try await Self.moveIndexes(transitions, on: connection, logger: logger)
            } catch {
                _ = try? await connection.query("RESET statement_timeout", logger: logger)
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.startLock))", logger: logger)
                // A refusal to start (rows that do not fit a declaration) is said as itself; the transaction rolled
                // back.
                if let error = error as? PostgresTransactionError,
                    let refusal = error.closureError as? ConfigurationError,
                    error.rollbackError == nil
                {
                    throw refusal
                }
                throw error
            }
            try await connection.query("RESET statement_timeout", logger: logger)
            try await connection.query("SELECT pg_advisory_unlock(\(Self.startLock))", logger: logger)
        }
    }

    /// The advisory lock that serialises starts (`CREATE … IF NOT EXISTS` is not safe against itself).
    private static let startLock: Int64 = 7_244_831

    /// Takes the start lock by trying every 50 ms rather than waiting in `pg_advisory_lock`: a session waiting in a
    /// statement holds a snapshot, which the index build of the start holding the lock would wait for in turn.
    private static func takeStartLock(on connection: PostgresConnection, logger: Logger) async throws {
        while try await connection.query("SELECT pg_try_advisory_lock(\(startLock))", logger: logger)
            .collect().first?.decode(Bool.self) != true
        {
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Creates the schema, checks every row of a table whose declaration changed and stores the declarations.
    private static func prepareInTransaction(
        tables: [TableOptions], on connection: PostgresConnection, logger: Logger
    ) async throws -> [SchemaTransition] {
        try await connection.withTransaction(logger: logger) { connection in
            if try await connection.query("SELECT to_regclass(\(DatabaseFormat.table)) IS NOT NULL", logger: logger)
                .collect().first?.decode(Bool.self) == true,
                let found = try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT max(\(DatabaseFormat.column))::bigint FROM \(DatabaseFormat.table)"),
                    logger: logger
                ).collect().first?.decode(Int?.self),
                !DatabaseFormat.accepts(found: found)
            {
                throw DatabaseFormat.refusal(found: found, database: "on PostgreSQL")
            }
            for statement in RecordColumns.schema(.postgres) {
                // An index only when missing: even finding that it exists, CREATE INDEX would hold every writer up to
                // the commit.
                if let index = statement.index,
                    try await connection.query("SELECT to_regclass(\(index)) IS NOT NULL", logger: logger).collect()
                        .first?.decode(Bool.self) == true
                {
                    continue
                }
                try await connection.query(PostgresQuery(unsafeSQL: statement.sql), logger: logger)
            }
            for statement in DatabaseFormat.recordCurrent {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            var transitions: [SchemaTransition] = []
            for table in tables {
                transitions.append(try await prepareTable(table, on: connection, logger: logger))
            }
            return transitions
        }
    }

    /// Registers `table`'s clock and follows its ``SchemaTransition``: checks its rows against a new declaration and
    /// stores the declaration; its indexes move after the transaction (``moveIndexes(_:on:logger:)``).
    private static func prepareTable(
        _ table: TableOptions, on connection: PostgresConnection, logger: Logger
    ) async throws -> SchemaTransition {
        try await connection.query(
            query(RecordWriteSQL.registerClock(of: table.name, dialect: .postgres)), logger: logger)
        var storedText: String?
        for try await text in try await connection.query(
            query(DeclarationSQL.stored(table: table.name, dialect: .postgres)), logger: logger
        ).decode(String.self) {
            storedText = text
        }
        let transition = try SchemaTransition(table: table.name, storedText: storedText, declared: table.schema)
        if transition.checksRows {
            let rows = try await connection.query(
                query(DeclarationSQL.rows(table: table.name, dialect: .postgres)), logger: logger)
            for try await (id, body) in rows.decode((String, String).self) {
                guard case .object(let properties) = try JSONParser.parse(body) else {
                    throw RepositoryError.corruptBody(id: id)
                }
                try transition.check(id: id, properties: properties)
            }
        }
        guard transition.changed else { return transition }
        let declaration =
            table.schema.map { DeclarationSQL.store(table: table.name, text: $0.text, dialect: .postgres) }
            ?? DeclarationSQL.forget(table: table.name, dialect: .postgres)
        try await connection.query(query(declaration), logger: logger)
        return transition
    }

    /// Creates the declared columns' indexes that are missing (or left invalid by a failed build) and drops those of
    /// columns no longer declared, each `CONCURRENTLY`, outside any transaction.
    private static func moveIndexes(
        _ transitions: [SchemaTransition], on connection: PostgresConnection, logger: Logger
    ) async throws {
        var valid: [String: Bool] = [:]
        for try await (name, isValid) in try await connection.query(
            """
            SELECT index_class.relname::text, pg_index.indisvalid FROM pg_index
            JOIN pg_class index_class ON index_class.oid = pg_index.indexrelid
            WHERE pg_index.indrelid = '\(unescaped: RecordColumns.recordsTable)'::regclass
            """, logger: logger
        ).decode((String, Bool).self) {
            valid[name] = isValid
        }
        var statements: [String] = []
        for (name, create) in transitions.flatMap({ $0.indexes(dialect: .postgres) }) where valid[name] != true {
            if valid[name] == false { statements.append("DROP INDEX CONCURRENTLY IF EXISTS \(name)") }
            statements.append(create)
        }
        statements += transitions.flatMap { $0.dropStatements(dialect: .postgres) }
        for statement in statements {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
    }

    package func record(in scope: RecordScope, id: String) async throws -> StoredRecord? {
        try await pool.withConnection { connection in
            try await Self.fetchRecord(connection, table: scope.storedName, id: id, logger: logger)
        }
    }

    /// A page is read through a cursor, a few rows per `FETCH` (``CursorFetchSize``), so that a page that ends early
    /// does not make PostgreSQL send the rest of `$top` rows; a small page of small records, by one statement
    /// (``OneStatementPage``). Its statements run on one connection. If the request is
    /// cancelled (its client went away, or the server is stopping) or runs past the statement time limit, the
    /// statement running is cancelled (``PostgresStatementCanceller``; PostgresNIO cannot cancel a statement itself):
    /// it fails, the transaction rolls back, and the connection goes back to the pool whole once the cancel has been
    /// delivered, so that the cancel can never reach the next statement run on the connection. Closing the connection
    /// instead would hand a closing connection to the next request waiting for one, which would fail; it is done only
    /// without a canceller.
    package func list<Collector: PageCollector>(
        in scope: RecordScope, query: ListQuery, into collector: Collector
    ) async throws -> ListedPage<Collector> {
        let statements = try RecordQuerySQL.list(table: scope.storedName, query: query, dialect: .postgres)
        let logger = self.logger
        let pool = self.pool
        let canceller = self.canceller
        let (table, largeRecordTables) = (scope.storedName, self.largeRecordTables)
        let atOnce = OneStatementPage.applies(to: query, tableHoldsLargeRecords: largeRecordTables.contains(table))
        @Sendable func noteSize(_ bodyBytes: Int) { largeRecordTables.note(table, bodyBytes: bodyBytes) }
        return try await StatementTimeLimit.run(statementTimeout) {
            try await pool.withConnection { connection in
                let process = try await canceller?.process(of: connection)
                let cancelling = Mutex<Task<Void, Never>?>(nil)
                let page: Result<ListedPage<Collector>, any Error>
                do {
                    page = .success(
                        try await withTaskCancellationHandler {
                            if atOnce {
                                return try await Self.readPageAtOnce(
                                    statements, top: query.top, into: collector, noting: noteSize, on: connection,
                                    logger: logger)
                            }
                            return try await connection.withTransaction(logger: logger) { connection in
                                try await Self.readPage(
                                    statements, top: query.top, into: collector, noting: noteSize, on: connection,
                                    logger: logger)
                            }
                        } onCancel: {
                            if let process, let canceller {
                                cancelling.withLock { $0 = canceller.cancel(process: process) }
                            } else {
                                let closing: EventLoopFuture<Void> = connection.close()
                                _ = closing
                            }
                        })
                } catch {
                    page = .failure(error)
                }
                await cancelling.withLock { $0 }?.value
                return try page.get()
            }
        }
    }

    /// Reads the page through the cursor, in fetches sized by the rows seen (``CursorFetchSize``); `noteSize` hears
    /// the bytes of every body received.
    private static func readPage<Collector: PageCollector>(
        _ statements: (page: SQLStatement, count: SQLStatement?), top: Int, into collector: Collector,
        noting noteSize: (Int) -> Void, on connection: PostgresConnection, logger: Logger
    ) async throws -> ListedPage<Collector> {
        var declare = statements.page
        declare.sql = "DECLARE \(pageCursor) NO SCROLL CURSOR FOR \(declare.sql)"
        try await connection.query(query(declare), logger: logger)
        var reading = PageReading(collector: collector, top: top)
        var fetched = 0
        var largestRow = 0
        fetching: while reading.rowsWanted > 0 {
            fetched = CursorFetchSize.next(
                rowsWanted: reading.rowsWanted, previous: fetched, largestRowBytes: largestRow)
            var received = 0
            for try await row in try await connection.query(
                PostgresQuery(unsafeSQL: "FETCH FORWARD \(fetched) FROM \(pageCursor)"), logger: logger)
            {
                received += 1
                let columns = try row.decode(Row.self)
                let bodyBytes = columns.4.utf8.count
                noteSize(bodyBytes)
                largestRow = max(largestRow, bodyBytes)
                guard try reading.read({ try record(columns) }) else { break fetching }
            }
            if received < fetched { break }
        }
        return reading.page(totalCount: try await count(statements.count, on: connection, logger: logger))
    }

    /// Reads the page by its statement alone, `$top + 1` rows at most (``OneStatementPage``); the rows after the
    /// page's end, if it ends early, are received and dropped. `noteSize` hears the bytes of every body received.
    private static func readPageAtOnce<Collector: PageCollector>(
        _ statements: (page: SQLStatement, count: SQLStatement?), top: Int, into collector: Collector,
        noting noteSize: (Int) -> Void, on connection: PostgresConnection, logger: Logger
    ) async throws -> ListedPage<Collector> {
        var reading = PageReading(collector: collector, top: top)
        for try await row in try await connection.query(query(statements.page), logger: logger) {
            let columns = try row.decode(Row.self)
            noteSize(columns.4.utf8.count)
            guard try reading.read({ try record(columns) }) else { break }
        }
        return reading.page(totalCount: try await count(statements.count, on: connection, logger: logger))
    }

    /// The answer of a page's count statement, when it has one.
    private static func count(
        _ statement: SQLStatement?, on connection: PostgresConnection, logger: Logger
    ) async throws -> Int? {
        guard let statement else { return nil }
        var count: Int?
        for try await value in try await connection.query(query(statement), logger: logger).decode(Int64.self) {
            count = Int(value)
        }
        return count
    }

    /// The cursor of a page read; one at a time per connection, closed with its transaction.
    private static let pageCursor = "tablesync_page"

    package func lastUpdatedAt(in scopes: [RecordScope]) async throws -> [Int64?] {
        let logger = self.logger
        return try await pool.withConnection { connection in
            var marks: [Int64?] = []
            for scope in scopes {
                var bindings = PostgresBindings(capacity: 1)
                bindings.append(scope.storedName)
                let query = PostgresQuery(unsafeSQL: RecordQuerySQL.lastUpdatedAt(.postgres), binds: bindings)
                let rows = try await connection.query(query, logger: logger)
                var mark: Int64?
                for try await value in rows.decode(Int64.self) { mark = value }
                marks.append(mark)
            }
            return marks
        }
    }

    /// A statement PostgreSQL refuses aborts its whole transaction, so a write whose values the database refuses
    /// would take the other writes of its batch with it. The first attempt runs every write plainly; if one is
    /// refused, the batch runs again with each write in a savepoint of its own, which answers that write alone.
    /// Two attempts at most, and savepoints only for a batch that needs them.
    package func write(_ writes: [RecordWriteRequest]) async throws -> [Result<StoredRecord?, any Error>] {
        let now = UpdatedAtClock.nowTicks()
        do {
            return try await write(writes, now: now, isolatingEach: false)
        } catch let error where DatabaseFailure(error)?.isCausedByRequest == true {
            return try await write(writes, now: now, isolatingEach: true)
        }
    }

    private func write(
        _ writes: [RecordWriteRequest], now: Int64, isolatingEach: Bool
    ) async throws -> [Result<StoredRecord?, any Error>] {
        let (logger, largeRecordTables) = (self.logger, self.largeRecordTables)
        return try await withTransaction { connection -> [Result<StoredRecord?, any Error>] in
            // The statement time limit bounds reads; a write waits for its tables' locks behind other writers for as
            // long as their batches take, which is queueing, not a runaway statement.
            try await connection.query("SET LOCAL statement_timeout = 0", logger: logger)
            var planner = RecordWritePlanner(nowTicks: now, count: writes.count)
            try await Self.lockClocks(of: writes, for: &planner, on: connection, logger: logger)
            for write in writes {
                let rows = write.scope.storedName
                let existing = try await Self.fetchRecord(connection, table: rows, id: write.id, logger: logger)
                guard let plan = try planner.plan(write, existing: existing) else { continue }
                guard isolatingEach else {
                    try await Self.store(plan, rows: rows, connection, noting: largeRecordTables, logger: logger)
                    planner.stored(plan)
                    continue
                }
                try await connection.query("SAVEPOINT tablesync_write", logger: logger)
                do {
                    try await Self.store(plan, rows: rows, connection, noting: largeRecordTables, logger: logger)
                    planner.stored(plan)
                    try await connection.query("RELEASE SAVEPOINT tablesync_write", logger: logger)
                } catch let error where DatabaseFailure(error)?.isCausedByRequest == true {
                    try await connection.query("ROLLBACK TO SAVEPOINT tablesync_write", logger: logger)
                    try await connection.query("RELEASE SAVEPOINT tablesync_write", logger: logger)
                    planner.refused(error)
                }
            }
            for (table, last) in planner.movedClocks {
                try await connection.query(
                    Self.query(RecordWriteSQL.setClock(of: table, to: last, dialect: .postgres)), logger: logger)
                // Delivered at commit, to every server process listening on the database (PostgresChangeListener).
                try await connection.query(
                    "SELECT pg_notify(\(PostgresChangeListener.channel), \(table))",
                    logger: logger)
            }
            return planner.results
        }
    }

    /// Takes the write locks of every table `writes` touch, in name order so that two batches never deadlock, and
    /// held to commit; `planner` hears each table's clock, read under its lock.
    private static func lockClocks(
        of writes: [RecordWriteRequest], for planner: inout RecordWritePlanner, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        for table in Set(writes.map(\.table)).sorted() {
            let lock = query(RecordWriteSQL.clock(of: table, dialect: .postgres))
            for try await last in try await connection.query(lock, logger: logger).decode(Int64.self) {
                planner.readClock(of: table, last: last)
            }
            guard !planner.needsClock(of: table) else { throw RepositoryError.unknownTable(table) }
        }
    }

    /// Runs `body` in a transaction on a connection of the pool.
    private func withTransaction<Value: Sendable>(
        _ body: (PostgresConnection) async throws -> Value
    ) async throws -> Value {
        let logger = self.logger
        return try await pool.withConnection { connection in
            try await connection.withTransaction(logger: logger) { connection in try await body(connection) }
        }
    }

    /// Stores the change of `plan` to the rows stored under `rows` (a ``RecordScope/storedName``), if it has one; a
    /// body written is noted in `largeRecordTables`, so that a large record written through this server never meets a
    /// small page read in one statement.
    private static func store(
        _ plan: RecordWritePlan, rows: String, _ connection: PostgresConnection,
        noting largeRecordTables: LargeRecordTables, logger: Logger
    ) async throws {
        guard let change = plan.change else { return }
        if let body = change.body { largeRecordTables.note(rows, bodyBytes: body.utf8.count) }
        try await connection.query(
            query(RecordWriteSQL.statement(change, rows: rows, dialect: .postgres)), logger: logger)
    }

    private static func fetchRecord(
        _ connection: PostgresConnection, table: String, id: String, logger: Logger
    ) async throws -> StoredRecord? {
        var builder = SQLBuilder(dialect: .postgres)
        let sql =
            """
            SELECT \(RecordQuerySQL.selectColumns(.postgres)) FROM \(RecordColumns.recordsTable) WHERE \
            \(RecordColumns.tableName) = \(builder.bind(.text(table))) AND \(RecordColumns.id) = \
            \(builder.bind(.text(id)))
            """
        let statement = builder.statement(sql)
        var found: StoredRecord?
        for try await row in try await connection.query(query(statement), logger: logger) {
            found = try decode(row)
        }
        return found
    }

    private static func decode(_ row: PostgresRow) throws -> StoredRecord {
        try record(try row.decode(Row.self))
    }

    /// A page's row as read: id, createdAt, updatedAt, deleted, and the body as text.
    private typealias Row = (String, Int64, Int64, Bool, String)

    /// The record of a row's columns.
    private static func record(_ columns: Row) throws -> StoredRecord {
        let (id, createdAt, updatedAt, deleted, bodyText) = columns
        guard case .object(let properties) = try JSONParser.parse(bodyText) else {
            throw RepositoryError.corruptBody(id: id)
        }
        return StoredRecord(
            id: id, createdAt: createdAt, updatedAt: updatedAt, deleted: deleted, properties: properties)
    }

    static func query(_ statement: SQLStatement) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: statement.bindings.count)
        for value in statement.bindings {
            switch value {
            case .null: bindings.appendNull()
            case .bool(let flag): bindings.append(flag)
            case .integer(let integer): bindings.append(integer)
            case .double(let double): bindings.append(double)
            case .text(let text): bindings.append(text)
            }
        }
        return PostgresQuery(unsafeSQL: statement.sql, binds: bindings)
    }
}
