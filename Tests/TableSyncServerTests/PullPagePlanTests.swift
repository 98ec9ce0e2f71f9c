import Foundation
import SyncProtocol
import TableSync
import Testing
import TestSupport
@testable import TableSyncServer

/// The pages a pull asks for, as each database plans them: they must read the `(table_name, updated_at, id)`
/// index in order and stop after a page, so that a page of a table of millions costs what a page of thousands does
/// (bench S1, `tablesync-bench server-pages`). The requests are the client's own (`PullPlan`), parsed by the
/// server's own parser. The 2,000 rows here are many next to one page; PostgreSQL is analysed first, as autovacuum
/// would, and SQLite plans without statistics, as a server's file does.
@Suite("Pull page plans")
struct PullPagePlanTests {
    @Test(
        "a keyset page and an SDK page (updatedAt ge with $skip) read the updatedAt index in order, with no sort",
        arguments: Backend.available)
    func pullPagesUseTheUpdatedIndex(backend: Backend) async throws {
        let table = uniqueTableName("planned")
        try await withDatabase(backend, sortsDiscouraged: true) { repository, sql, database in
            let options = TableSyncServer.TableOptions(name: table)
            try await repository.prepare(tables: [options])
            let writes = (0..<2000).map { index in
                RecordWriteRequest(table: table, id: String(format: "r%05d", index)) { _ in
                    .insert(["n": .integer(Int64(index))])
                }
            }
            let written = try await repository.write(writes)
            if case .postgres(let location) = database { try await analyzeRecords(location) }
            // A cursor a quarter of the way in: three quarters of the rows lie after it.
            let stamp = try #require(try written[500].get()?.updatedAt)
            let watermark = PullWatermark(updatedAt: Timestamp(ticks: stamp).text, lastID: "r00500")
            for (name, mode, skip) in [
                ("keyset", PullPlan.Mode.keyset, 0), ("ge + $skip", .greaterOrEqualWithSkip, 200)
            ] {
                let request = PullPlan.query(
                    mode: mode, baseFilter: nil, watermark: watermark, skip: skip, pageSize: 100)
                let text = request.map {
                    "\($0.name)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0.value)"
                }
                .joined(separator: "&")
                let query = try ListQuery.parse(QueryString(text), version: .v3, table: options)
                let statement = try RecordQuerySQL.list(
                    table: table, query: query, dialect: backend == .sqlite ? .sqlite : .postgres
                ).page
                let explain = backend == .sqlite ? "EXPLAIN QUERY PLAN " : "EXPLAIN "
                let plan = try await sql(SQLStatement(sql: explain + statement.sql, bindings: statement.bindings))
                    .joined(separator: "\n")
                #expect(plan.contains("tablesync_records_updated"), "\(name): the updatedAt index: \(plan)")
                #expect(
                    !plan.contains("TEMP B-TREE") && !plan.contains("Sort"),
                    "\(name): the index gives the order: \(plan)")
            }
        }
    }

    @Test(
        "a page in updatedAt or createdAt order, either direction, with or without id, reads an index with no sort",
        arguments: Backend.available)
    func dateOrdersUseAnIndex(backend: Backend) async throws {
        let table = uniqueTableName("ordered")
        try await withDatabase(backend, sortsDiscouraged: true) { repository, sql, database in
            let options = TableSyncServer.TableOptions(name: table)
            try await repository.prepare(tables: [options])
            let writes = (0..<2000).map { index in
                RecordWriteRequest(table: table, id: String(format: "r%05d", index)) { _ in
                    .insert(["n": .integer(Int64(index))])
                }
            }
            _ = try await repository.write(writes)
            if case .postgres(let location) = database { try await analyzeRecords(location) }
            for order in [
                "createdAt", "createdAt desc", "createdAt desc,id desc", "updatedAt desc", "updatedAt,id", "id desc"
            ] {
                let query = try ListQuery.parse(
                    QueryString("$top=20&$orderby=\(order)"), version: .v3, table: options)
                #expect(!ReadWeight.isBulk(query), "\(order) is no bulk read")
                let statement = try RecordQuerySQL.list(
                    table: table, query: query, dialect: backend == .sqlite ? .sqlite : .postgres
                ).page
                let explain = backend == .sqlite ? "EXPLAIN QUERY PLAN " : "EXPLAIN "
                let plan = try await sql(SQLStatement(sql: explain + statement.sql, bindings: statement.bindings))
                    .joined(separator: "\n")
                #expect(
                    !plan.contains("TEMP B-TREE") && !plan.contains("Sort"), "\(order): an index gives it: \(plan)")
            }
        }
    }

    @Test(
        "PostgreSQL: a page in an order no index gives sorts rows by their keys and converts only the page's bodies",
        arguments: Backend.postgresIfAvailable)
    func sortedPagesConvertOnlyTheirBodies(backend: Backend) async throws {
        let table = uniqueTableName("sorted")
        try await withDatabase(backend) { repository, sql, database in
            let options = try await Self.twoHundredRecords(in: table, repository)
            for order in ["text", "n desc,text", "deleted,updatedAt desc"] {
                let query = try ListQuery.parse(
                    QueryString("$top=20&$orderby=\(order)"), version: .v3, table: options)
                let statement = try RecordQuerySQL.list(table: table, query: query, dialect: .postgres).page
                let plan = try await sql(
                    SQLStatement(sql: "EXPLAIN (VERBOSE) " + statement.sql, bindings: statement.bindings))
                // Below the Limit, the sort and the scan: no body as text.
                let belowLimit = plan.drop { !$0.contains("Limit") }.dropFirst()
                #expect(!belowLimit.isEmpty, "\(order): \(plan.joined(separator: "\n"))")
                #expect(
                    !belowLimit.contains { $0.contains("body)::text") },
                    "\(order): bodies converted before the limit: \(plan.joined(separator: "\n"))")
            }
        }
    }

    @Test("SQLite: a page whose $filter or $orderby names body properties gathers them per row with no sort")
    func namedPropertiesAreGatheredWithoutASort() async throws {
        let table = uniqueTableName("gathered")
        try await withDatabase(.sqlite) { repository, sql, _ in
            let options = try await Self.twoHundredRecords(in: table, repository)
            for request in ["$filter=n gt 3", "$filter=n gt 3 and text ne 'x'&$orderby=text desc", "$orderby=n"] {
                let query = try ListQuery.parse(
                    QueryString("$top=20&" + request.replacingOccurrences(of: " ", with: "%20")), version: .v3,
                    table: options)
                let statement = try RecordQuerySQL.list(table: table, query: query, dialect: .sqlite).page
                let plan = try await sql(
                    SQLStatement(sql: "EXPLAIN QUERY PLAN " + statement.sql, bindings: statement.bindings)
                ).joined(separator: "\n")
                // A sort for GROUP BY would hold every row's named values, a large one of each among them.
                #expect(plan.contains("json_each") || plan.contains("VIRTUAL TABLE"), "\(request): \(plan)")
                #expect(!plan.contains("GROUP BY"), "\(request): the rows come in rowid order: \(plan)")
            }
        }
    }

    /// Makes `table` with 200 records r00000…, each with a number `n` (0–6) and a `text`; returns its options.
    static func twoHundredRecords(
        in table: String, _ repository: any RecordRepository
    ) async throws -> TableSyncServer.TableOptions {
        let options = TableSyncServer.TableOptions(name: table)
        try await repository.prepare(tables: [options])
        let writes = (0..<200).map { index in
            RecordWriteRequest(table: table, id: String(format: "r%05d", index)) { _ in
                .insert(["n": .integer(Int64(index % 7)), "text": .string("record \(index)")])
            }
        }
        _ = try await repository.write(writes)
        return options
    }
}
