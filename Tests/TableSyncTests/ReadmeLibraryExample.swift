// The README's library example, exactly as printed there: "the README's library example compiles and runs" in
// DocumentationExamplesTests checks that the two are the same and runs it against a live server.
import Foundation // UUID
import TableSync

struct TodoItem: Codable, Sendable { // your own model: coding keys are property names
    var id: String
    var text: String
    var complete: Bool
}

/// Adds an item to a store made by `tablesync init --remote URL --table TodoItem`, syncs, returns the open items.
func addItem(_ text: String, toStore store: String) async throws -> [TodoItem] {
    let context = try await SyncContext.open(directory: store) // takes the store's lock, waiting for a watch's run
    let todo = try await context.table("TodoItem", as: TodoItem.self)
    try await todo.insert(TodoItem(id: UUID().uuidString, text: text, complete: false))
    try await todo.pull(queryID: "TodoItem") // init's query for the table: push the table, then pull what changed
    let status = try await context.status() // pending, hand edits, broken files, conflicts
    if !status.conflicts.isEmpty { print("\(status.conflicts.count) conflicts: see `tablesync conflicts`") }
    let report = try await context.sync() // push, then pull every query of queries.json
    print("pushed \(report.push.applied), pulled \(report.pulls.values.map(\.written).reduce(0, +)) records")
    return try await todo.query(try LocalQuery(filter: "complete eq false", orderBy: "text")) // OData text
}
