import Logging
import PostgresNIO
import SyncProtocol

/// Records in PostgreSQL through PostgresNIO: bodies as `jsonb`, dates as `bigint` ticks.
///
/// Each write transaction first updates its tables' rows in `tablesync_table_clock` (`UPDATE … RETURNING`, in
/// table name order), which holds those rows' locks until commit. Writers of one table therefore run one after another, each assigning
/// `updatedAt = max(now, last + 1)` under the lock, and PostgreSQL makes a transaction visible before it
/// releases its locks: commit order is `updatedAt` order, with any number of concurrent writers or servers.
public final class PostgresRecordRepository: RecordRepository {
    private let client: PostgresClient
    private let logger: Logger

    /// A repository over `client`, which must be running (it is a service of the server application).
    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func prepare(tables: [TableOptions]) async throws {
        let drops: [String]
        do {
            drops = try await prepareInTransaction(tables: tables)
        } catch let error as PostgresTransactionError {
            // A refusal to start (rows that do not fit a declaration) is said as itself; the transaction rolled back.
            if let refusal = error.closureError as? ConfigurationError, error.rollbackError == nil { throw refusal }
            throw error
        }
        // Indexes of columns no longer declared go once the new declaration is committed, without the exclusive lock
        // a plain DROP INDEX takes (it would hold up every reader of every server on the database).
        for statement in drops {
            try await client.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
    }

    /// Creates the schema and the declared columns' indexes, checks rows against changed declarations and stores
    /// them; returns the statements that drop the indexes no longer declared, to run after the commit.
    private func prepareInTransaction(tables: [TableOptions]) async throws -> [String] {
        try await client.withTransaction(logger: logger) { connection in
            // Serialise concurrent start-ups (CREATE … IF NOT EXISTS is not safe against itself).
            try await connection.query("SELECT pg_advisory_xact_lock(7244831)", logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: """
                CREATE TABLE IF NOT EXISTS \(RecordColumns.recordsTable) (
                    \(RecordColumns.tableName) TEXT COLLATE "C" NOT NULL,
                    \(RecordColumns.id) TEXT COLLATE "C" NOT NULL,
                    \(RecordColumns.createdAt) BIGINT NOT NULL,
                    \(RecordColumns.updatedAt) BIGINT NOT NULL,
                    \(RecordColumns.deleted) BOOLEAN NOT NULL DEFAULT FALSE,
                    \(RecordColumns.body) JSONB NOT NULL,
                    PRIMARY KEY (\(RecordColumns.tableName), \(RecordColumns.id))
                )
                """), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: """
                CREATE TABLE IF NOT EXISTS \(RecordColumns.clockTable) (
                    \(RecordColumns.tableName) TEXT COLLATE "C" PRIMARY KEY,
                    last_updated_at BIGINT NOT NULL
                )
                """), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: """
                CREATE TABLE IF NOT EXISTS \(RecordColumns.declaredColumnsTable) (
                    \(RecordColumns.tableName) TEXT COLLATE "C" PRIMARY KEY,
                    \(RecordColumns.columnsDeclaration) TEXT NOT NULL
                )
                """), logger: logger)

            // Decide first, then lock the records table once, before anything else touches it: a CREATE INDEX after a
            // weaker lock on the table would wait for writers that wait for that lock (a deadlock). SHARE lets readers
            // on; a start that changes nothing takes no lock on the table at all.
            var transitions: [SchemaTransition] = []
            for table in tables {
                var storedText: String?
                for try await text in try await connection.query(
                    "SELECT columns FROM tablesync_declared_columns WHERE table_name = \(table.name)", logger: logger
                ).decode(String.self) {
                    storedText = text
                }
                transitions.append(try SchemaTransition(table: table.name, storedText: storedText, declared: table.schema))
            }
            var existing: Set<String> = []
            for try await name in try await connection.query(
                "SELECT indexname::text FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'tablesync_records'", logger: logger
            ).decode(String.self) {
                existing.insert(name)
            }
            let updatedIndex = """
                CREATE INDEX IF NOT EXISTS tablesync_records_updated
                    ON \(RecordColumns.recordsTable) (\(RecordColumns.tableName), \(RecordColumns.updatedAt), \(RecordColumns.id))
                """
            let creates = (existing.contains("tablesync_records_updated") ? [] : [updatedIndex])
                + transitions.flatMap { $0.indexes(dialect: .postgres) }.filter { !existing.contains($0.name) }.map(\.create)
            if !creates.isEmpty || transitions.contains(where: \.checksRows) {
                try await connection.query(PostgresQuery(unsafeSQL: "LOCK TABLE \(RecordColumns.recordsTable) IN SHARE MODE"), logger: logger)
            }
            for transition in transitions where transition.checksRows {
                let rows = try await connection.query(
                    "SELECT id, CAST(body AS TEXT) FROM tablesync_records WHERE table_name = \(transition.table)", logger: logger)
                for try await (id, body) in rows.decode((String, String).self) {
                    guard case .object(let properties) = try JSONParser.parse(body) else { throw RepositoryError.corruptBody(id: id) }
                    try transition.check(id: id, properties: properties)
                }
            }
            for statement in creates {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            for transition in transitions {
                try await connection.query(
                    "INSERT INTO tablesync_table_clock (table_name, last_updated_at) VALUES (\(transition.table), 0) ON CONFLICT DO NOTHING",
                    logger: logger)
                guard transition.changed else { continue }
                if let declared = transition.declared {
                    try await connection.query(
                        "INSERT INTO tablesync_declared_columns (table_name, columns) VALUES (\(transition.table), \(declared.text)) ON CONFLICT (table_name) DO UPDATE SET columns = excluded.columns",
                        logger: logger)
                } else {
                    try await connection.query("DELETE FROM tablesync_declared_columns WHERE table_name = \(transition.table)", logger: logger)
                }
            }
            return transitions.flatMap { $0.dropStatements(dialect: .postgres) }
        }
    }

    public func record(table: String, id: String) async throws -> StoredRecord? {
        try await client.withConnection { connection in
            try await Self.fetchRecord(connection, table: table, id: id, logger: logger)
        }
    }

    public func list(table: String, query: ListQuery) async throws -> RecordPage {
        let statements = try RecordQuerySQL.list(table: table, query: query, dialect: .postgres)
        var records = try await Self.fetchRecords(client, statements.page, logger: logger)
        let hasMore = records.count > query.top
        if hasMore { records.removeLast() }
        var count: Int?
        if let countStatement = statements.count {
            for try await value in try await client.query(Self.query(countStatement), logger: logger).decode(Int64.self) {
                count = Int(value)
            }
        }
        return RecordPage(records: records, hasMore: hasMore, totalCount: count)
    }

    public func write(_ writes: [RecordWriteRequest]) async throws -> [Result<StoredRecord?, any Error>] {
        let now = UpdatedAtClock.nowTicks()
        let logger = self.logger
        return try await client.withTransaction(logger: logger) { connection -> [Result<StoredRecord?, any Error>] in
            // The write locks of every table touched, taken in name order so that two batches never deadlock,
            // and held to commit. The clock rule is UpdatedAtClock.next.
            var clocks: [String: (last: Int64, changed: Bool)] = [:]
            for table in Set(writes.map(\.table)).sorted() {
                for try await value in try await connection.query(
                    "UPDATE tablesync_table_clock SET last_updated_at = last_updated_at WHERE table_name = \(table) RETURNING last_updated_at",
                    logger: logger
                ).decode(Int64.self) {
                    clocks[table] = (value, false)
                }
                guard clocks[table] != nil else { throw RepositoryError.unknownTable(table) }
            }
            var results: [Result<StoredRecord?, any Error>] = []
            results.reserveCapacity(writes.count)
            for write in writes {
                let table = write.table
                let id = write.id
                guard let last = clocks[table]?.last else { throw RepositoryError.unknownTable(table) }
                let existing = try await Self.fetchRecord(connection, table: table, id: id, logger: logger)
                let decision: RecordWrite
                do {
                    decision = try write.decide(existing)
                } catch {
                    results.append(.failure(error))
                    continue
                }
                let stamp = UpdatedAtClock.next(nowTicks: now, last: last)
                clocks[table] = (stamp, true)
                results.append(.success(try await Self.apply(decision, connection, table: table, id: id, existing: existing,
                                                             stamp: stamp, logger: logger)))
            }
            for (table, clock) in clocks where clock.changed {
                try await connection.query(
                    "UPDATE tablesync_table_clock SET last_updated_at = \(clock.last) WHERE table_name = \(table)", logger: logger)
            }
            return results
        }
    }

    private static func apply(
        _ decision: RecordWrite, _ connection: PostgresConnection, table: String, id: String, existing: StoredRecord?,
        stamp: Int64, logger: Logger
    ) async throws -> StoredRecord? {
        switch decision {
        case .insert(let properties):
            let body = CanonicalJSON.string(.object(properties), style: .compact)
            try await connection.query(
                "INSERT INTO tablesync_records (table_name, id, created_at, updated_at, deleted, body) VALUES (\(table), \(id), \(stamp), \(stamp), FALSE, CAST(\(body) AS JSONB))",
                logger: logger)
            return StoredRecord(id: id, createdAt: stamp, updatedAt: stamp, deleted: false, properties: properties)
        case .update(let properties):
            guard var record = existing else { return nil }
            let body = CanonicalJSON.string(.object(properties), style: .compact)
            try await connection.query(
                "UPDATE tablesync_records SET body = CAST(\(body) AS JSONB), updated_at = \(stamp) WHERE table_name = \(table) AND id = \(id)",
                logger: logger)
            record.properties = properties
            record.updatedAt = stamp
            return record
        case .softDelete:
            guard var record = existing else { return nil }
            try await connection.query(
                "UPDATE tablesync_records SET deleted = TRUE, updated_at = \(stamp) WHERE table_name = \(table) AND id = \(id)",
                logger: logger)
            record.deleted = true
            record.updatedAt = stamp
            return record
        case .hardDelete:
            guard var record = existing else { return nil }
            try await connection.query(
                "DELETE FROM tablesync_records WHERE table_name = \(table) AND id = \(id)", logger: logger)
            record.deleted = true
            record.updatedAt = stamp
            return record
        }
    }

    private static func fetchRecord(
        _ connection: PostgresConnection, table: String, id: String, logger: Logger
    ) async throws -> StoredRecord? {
        var builder = SQLBuilder(dialect: .postgres)
        let sql = "SELECT \(RecordQuerySQL.selectColumns(.postgres)) FROM \(RecordColumns.recordsTable) WHERE \(RecordColumns.tableName) = \(builder.bind(.text(table))) AND \(RecordColumns.id) = \(builder.bind(.text(id)))"
        let statement = builder.statement(sql)
        var found: StoredRecord?
        for try await row in try await connection.query(query(statement), logger: logger) {
            found = try decode(row)
        }
        return found
    }

    private static func fetchRecords(
        _ client: PostgresClient, _ statement: SQLStatement, logger: Logger
    ) async throws -> [StoredRecord] {
        var records: [StoredRecord] = []
        for try await row in try await client.query(query(statement), logger: logger) {
            records.append(try decode(row))
        }
        return records
    }

    private static func decode(_ row: PostgresRow) throws -> StoredRecord {
        let (id, createdAt, updatedAt, deleted, bodyText) = try row.decode((String, Int64, Int64, Bool, String).self)
        guard case .object(let properties) = try JSONParser.parse(bodyText) else { throw RepositoryError.corruptBody(id: id) }
        return StoredRecord(id: id, createdAt: createdAt, updatedAt: updatedAt, deleted: deleted, properties: properties)
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
