import Foundation
import GRDB
import PostgresNIO
import SyncProtocol
@testable import TableSyncServer
import Testing
import TestSupport

/// How declared columns are stored, on every backend: the database answers `$filter` and `$orderby` on a declared
/// column from its index (shown by the query plan), and a declaration that changes between starts is checked
/// against the stored rows and moves the indexes with it.
@Suite("Declared columns: storage")
struct DeclaredColumnStorageTests {
    @Test("a $filter and an $orderby on a declared column use its index (EXPLAIN)", arguments: Backend.available)
    func queriesUseTheIndexes(backend: Backend) async throws {
        let table = uniqueTableName("indexed")
        let schema = try TableSchema(parsing: "rank:number;text:string;due:date;done:boolean")
        try await withDatabase(backend, sortsDiscouraged: true) { repository, sql, database in
            try await repository.prepare(tables: [TableSyncServer.TableOptions(name: table, schema: schema)])
            let writes = (0..<2000).map { index in
                let properties: [String: JSONValue] = [
                    "rank": .integer(Int64(index % 500)), "text": .string("item \(index)"),
                    "done": .bool(index % 2 == 0),
                    "due": .string(Timestamp(ticks: 17_040_672_000_000_000 + Int64(index) * 600_000_000).text)
                ]
                return RecordWriteRequest(table: table, id: "r\(index)") { _ in .insert(properties) }
            }
            _ = try await repository.write(writes)
            // PostgreSQL plans from statistics, which autovacuum keeps; here the table's 2,000 new rows must be
            // counted before the planner sees them.
            if case .postgres(let location) = database { try await analyzeRecords(location) }

            let queries: [(filter: String?, orderBy: [OrderByKey], column: String)] = [
                ("rank eq 250", [], "rank"),
                ("text eq 'item 7'", [], "text"),
                (nil, [OrderByKey(property: "text", descending: false)], "text"),
                (nil, [OrderByKey(property: "rank", descending: false)], "rank"),
                ("due ge 2024-01-08T00:00:00Z", [OrderByKey(property: "due", descending: false)], "due")
            ]
            for (filter, orderBy, name) in queries {
                var query = ListQuery(top: 50)
                query.schema = schema
                query.filter = try filter.map(FilterParser.parse)
                query.orderBy = orderBy
                let page = try RecordQuerySQL.list(
                    table: table, query: query, dialect: backend == .sqlite ? .sqlite : .postgres
                ).page
                let explain = backend == .sqlite ? "EXPLAIN QUERY PLAN " : "EXPLAIN "
                let plan = try await sql(SQLStatement(sql: explain + page.sql, bindings: page.bindings)).joined(
                    separator: "\n")
                let index = DeclaredColumnSQL.indexName(table: table, column: try #require(schema.column(named: name)))
                let described = "\(filter ?? "") \(orderBy.map(\.property)): \(plan)"
                #expect(plan.contains(index), "\(described)")
                if !orderBy.isEmpty {
                    #expect(
                        !plan.contains("TEMP B-TREE") && !plan.contains("Sort"),
                        "the index gives the order: \(described)")
                }
            }
            let pages = try await repository.list(
                table: table,
                query: {
                    var query = ListQuery(top: 3)
                    query.schema = schema
                    query.orderBy = [OrderByKey(property: "rank", descending: true)]
                    return query
                }())
            // Ties in rank are ordered by id, as text.
            #expect(pages.records.map(\.id) == ["r1499", "r1999", "r499"])
            try await repository.prepare(tables: [TableSyncServer.TableOptions(name: table)])
        }
    }

    @Test(
        "a new or changed declaration is checked against the stored rows at start; indexes follow it",
        arguments: Backend.available)
    func changedDeclarations(backend: Backend) async throws {
        let table = uniqueTableName("changing")
        let rankNumber = try Self.index(table, "rank", .number)
        let text = try Self.index(table, "text", .string)
        let dueString = try Self.index(table, "due", .string)
        let candidates: Set<String> = [
            rankNumber, text, dueString, try Self.index(table, "rank", .string), try Self.index(table, "due", .date)
        ]
        try await withDatabase(backend) { repository, sql, _ in
            func indexes() async throws -> Set<String> {
                let listing =
                    backend == .sqlite
                    ? "SELECT name FROM sqlite_master WHERE type = 'index'"
                    : "SELECT indexname FROM pg_indexes WHERE tablename = '\(RecordColumns.recordsTable)'"
                return Set(try await sql(SQLStatement(sql: listing, bindings: []))).intersection(candidates)
            }
            func refusal(_ columns: String) async throws -> String {
                do {
                    try await repository.prepare(tables: [try Self.options(table, columns)])
                } catch let error as ConfigurationError {
                    return error.message
                }
                Issue.record("\(columns) was accepted")
                return ""
            }
            try await repository.prepare(tables: [try Self.options(table, nil)])
            for (id, properties) in [
                ("r1", ["rank": 5, "text": "a"]), ("r2", ["rank": "high"]), ("r3", ["due": "2024-05-01T10:20:30Z"])
            ] as [(String, [String: JSONValue])] {
                _ = try await repository.write(table: table, id: id) { _ in .insert(properties) }
            }

            let wrongType = try await refusal("rank:number;text:string;due:string")
            #expect(
                wrongType.contains(
                    """
                    table \(table): the stored record 'r2' does not fit the declared columns: the property 'rank' must \
                    be a number
                    """
                ))
            #expect(wrongType.contains("Serve the table without columns"))
            #expect(try await indexes().isEmpty, "a refused start changes nothing")

            _ = try await repository.write(table: table, id: "r2") { _ in .update(["rank": 7]) }
            try await repository.prepare(tables: [try Self.options(table, "rank:number;text:string;due:string")])
            #expect(try await indexes() == [rankNumber, text, dueString])
            try await repository.prepare(tables: [try Self.options(table, "due:string;text:string;rank:number")])

            let notCanonical = try await refusal("rank:number;text:string;due:date")
            #expect(notCanonical.contains("'r3'") && notCanonical.contains("'due' holds \"2024-05-01T10:20:30Z\""))
            let retyped = try await refusal("rank:string;text:string;due:string")
            #expect(retyped.contains("'r1'") && retyped.contains("'rank' must be a string"))
            let undeclared = try await refusal("rank:number;due:string")
            #expect(undeclared.contains("'r1'") && undeclared.contains("'text' is not declared"))
            #expect(try await indexes() == [rankNumber, text, dueString])

            _ = try await repository.write(table: table, id: "r1") { _ in .update(["rank": 5]) }
            try await repository.prepare(tables: [try Self.options(table, "rank:number;due:string")])
            #expect(try await indexes() == [rankNumber, dueString])
            try await repository.prepare(tables: [try Self.options(table, nil)])
            #expect(try await indexes().isEmpty)
        }
    }

    static func options(_ table: String, _ columns: String?) throws -> TableSyncServer.TableOptions {
        TableSyncServer.TableOptions(name: table, schema: try columns.map(TableSchema.init(parsing:)))
    }

    static func index(_ table: String, _ name: String, _ type: ColumnType) throws -> String {
        DeclaredColumnSQL.indexName(table: table, column: try DeclaredColumn(name: name, type: type))
    }
}
