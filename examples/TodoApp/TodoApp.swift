// The TodoItem app of the Azure Mobile Apps offline-sync tutorial, as a small Swift program on TableSync's
// public library API: add and complete items offline, sync when the server is there, and see conflicts.
//
//   todo-example STORE init URL      create the store (the TodoItem table, pulled by the query "allTodoItems")
//   todo-example STORE add TEXT      add an item (offline: it waits in the journal)
//   todo-example STORE complete ID   mark an item complete
//   todo-example STORE list          the local items, open ones first
//   todo-example STORE sync          push pending changes, then pull "allTodoItems"
//   todo-example STORE conflicts     what the server refused, with both sides
import Foundation
import TableSync

/// The tutorial's model: the `TodoItem` table with its `text` and `complete` columns.
struct TodoItem: Codable, Sendable {
    var id: String
    var text: String
    var complete: Bool
    /// The server's version of the item, once synced.
    var version: String?
}

@main
struct TodoApp {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count >= 2 else {
            print("usage: todo-example STORE init URL | add TEXT | complete ID | list | sync | conflicts")
            exit(2)
        }
        do {
            try await run(store: arguments[0], command: arguments[1], rest: Array(arguments.dropFirst(2)))
        } catch {
            print("todo-example: \(error)")
            exit(1)
        }
    }

    static func run(store: String, command: String, rest: [String]) async throws {
        if command == "init" {
            guard let remote = rest.first else { throw UsageError(text: "init needs the server's URL") }
            let context = try SyncContext.initialize(
                directory: store, settings: StoreSettings(remote: remote, apiVersion: nil, tables: ["TodoItem"]))
            try await context.addQuery(PullQuery(id: "allTodoItems", table: "TodoItem"))
            print("Created the store in \(context.layout.root).")
            return
        }
        let context = try await SyncContext.open(directory: store, purpose: "todo-example \(command)")
        let todo = try await context.table("TodoItem", as: TodoItem.self)
        switch command {
        case "add":
            let item = try await todo.insert(
                TodoItem(id: UUID().uuidString.lowercased(), text: rest.joined(separator: " "), complete: false))
            print("Added \(item.id) (waits for the next sync).")
        case "complete":
            guard let id = rest.first, var item = try await todo.read(id: id) else {
                throw UsageError(text: "no item \(rest.first ?? "")")
            }
            item.complete = true
            try await todo.update(item)
            print("Completed \(item.text).")
        case "list":
            let items = try await todo.query(try LocalQuery(filter: nil, orderBy: "complete,text"))
            let pending = Set(await context.pendingOperations.map(\.id))
            for item in items {
                print(
                    """
                    \(item.complete ? "[x]" : "[ ]") \(item.text)  \
                    \(item.id)\(pending.contains(item.id) ? "  (not synced yet)" : "")
                    """
                )
            }
            if items.isEmpty { print("No items.") }
        case "sync":
            let report = try await context.sync()
            let pulled = report.pulls.values.reduce(0) { $0 + $1.written + $1.removed }
            print("Pushed \(report.push.applied), pulled \(pulled), \(report.push.conflicts.count) new conflict(s).")
        case "conflicts":
            let conflicts = try await context.conflicts()
            for conflict in conflicts {
                print(
                    """
                    \(conflict.key): mine \(conflict.local?["text"]?.stringValue ?? "(deleted)"), the server's \
                    \(conflict.server?["text"]?.stringValue ?? "(deleted)")
                    """
                )
            }
            if conflicts.isEmpty { print("No conflicts.") }
        default:
            throw UsageError(text: "unknown command \(command)")
        }
    }
}

/// A command line the example does not understand.
struct UsageError: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}
