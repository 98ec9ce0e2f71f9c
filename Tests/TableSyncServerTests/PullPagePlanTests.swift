import SyncProtocol
import Testing
import TestSupport
@testable import TableSyncServer

/// The pages a pull asks for, as each database plans them: they must read the `(table_name, updated_at, id)`
/// index in order and stop after a page, so that a page of a table of millions costs what a page of thousands does
/// (bench: `tablesync-bench server-pages`). The 2,000 rows here are many next to one page; PostgreSQL is analysed first,
/// as autovacuum would, and SQLite plans without statistics, as a server's file does.
@Suite("Pull page plans")
struct PullPagePlanTests {
    @Test("a keyset page and an SDK page (updatedAt ge with $skip) read the updatedAt index in order, with no sort",
          arguments: Backend.available)
    func pullPagesUseTheUpdatedIndex(backend: Backend) async throws {
        let table = uniqueTableName("planned")
        try await withDatabase(backend) { repository, sql, database in
            try await repository.prepare(tables: [TableSyncServer.TableOptions(name: table)])
            let writes = (0..<2000).map { index in
                RecordWriteRequest(table: table, id: String(format: "r%05d", index)) { _ in .insert(["n": .integer(Int64(index))]) }
            }
            let written = try await repository.write(writes)
            if case .postgres(let location) = database { try await analyzeRecords(location) }
            // A cursor a quarter of the way in: three quarters of the rows lie after it.
            let stamp = try #require(try written[500].get()?.updatedAt)
            let cursor = Timestamp(ticks: stamp).text
            let pages: [(name: String, filter: String, orderBy: [String], skip: Int)] = [
                ("keyset", "(updatedAt gt \(cursor)) or (updatedAt eq \(cursor) and id gt 'r00500')", ["updatedAt", "id"], 0),
                ("ge + $skip", "updatedAt ge \(cursor)", ["updatedAt"], 200),
            ]
            for page in pages {
                var query = ListQuery(top: 100)
                query.filter = try FilterParser.parse(page.filter)
                query.orderBy = page.orderBy.map { OrderByKey(property: $0, descending: false) }
                query.skip = page.skip
                let statement = try RecordQuerySQL.list(table: table, query: query, dialect: backend == .sqlite ? .sqlite : .postgres).page
                let explain = backend == .sqlite ? "EXPLAIN QUERY PLAN " : "EXPLAIN "
                let plan = try await sql(SQLStatement(sql: explain + statement.sql, bindings: statement.bindings)).joined(separator: "\n")
                #expect(plan.contains("tablesync_records_updated"), "\(page.name): the updatedAt index: \(plan)")
                #expect(!plan.contains("TEMP B-TREE") && !plan.contains("Sort"), "\(page.name): the index gives the order: \(plan)")
            }
        }
    }
}
