import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync

/// Tables of your own `Codable` types: the seed tutorial's `TodoItem`, as an app writes it.
@Suite("Typed tables")
struct TypedTableTests {
    struct TodoItem: Codable, Sendable, Equatable {
        var id: String
        var text: String
        var complete: Bool
        var due: Date?
        /// Read from the server's copy; never sent.
        var version: String?
        var updatedAt: Date?
    }

    @Test("insert, update, read, query and delete as model values; dates as the protocol writes them")
    func localOperations() async throws {
        let directory = TemporaryDirectory()
        let context = try SyncContext.initialize(
            directory: directory.file("store"),
            settings: StoreSettings(remote: "http://127.0.0.1:9", tables: ["TodoItem"]))
        let todo = try await context.table("TodoItem", as: TodoItem.self)
        let due = try #require(Timestamp(parsing: "2024-05-01T10:20:30.123Z")).date
        try await todo.insert(TodoItem(id: "milk", text: "Buy milk", complete: false, due: due))
        try await todo.insert(TodoItem(id: "dog", text: "Walk the dog", complete: false))
        #expect(try directory.read("store/tables/TodoItem/milk.json").contains("\"due\": \"2024-05-01T10:20:30.123Z\""))

        var dog = try #require(try await todo.read(id: "dog"))
        dog.complete = true
        try await todo.update(dog)
        let open = try await todo.query(try LocalQuery(filter: "complete eq false", orderBy: nil))
        #expect(open.map(\.id) == ["milk"])
        #expect(open.first?.due == due)
        #expect(
            await context.pendingOperations.map(\.kind) == [.insert, .insert], "the update collapsed into the insert")

        try await todo.delete(id: "milk")
        #expect(try await todo.read(id: "milk") == nil)
        #expect(try await todo.query().map(\.id) == ["dog"])
    }

    @Test("a record that does not decode as the model is an error naming the record")
    func undecodableRecord() async throws {
        let directory = TemporaryDirectory()
        let context = try SyncContext.initialize(
            directory: directory.file("store"),
            settings: StoreSettings(remote: "http://127.0.0.1:9", tables: ["TodoItem"]))
        try await context.table("TodoItem").insert(["id": "odd", "text": 5, "complete": false])
        let todo = try await context.table("TodoItem", as: TodoItem.self)
        let error = await #expect(throws: ModelCodingError.self) { try await todo.query() }
        #expect(error?.reason.contains("TodoItem/odd") == true)
    }

    @Test("a sync round trip: pushed items come back with the server's version and updatedAt")
    func syncRoundTrip() async throws {
        let server = try await LiveServer.start(.sqlite, tables: ["TodoItem"])
        defer { TestBackend.removeFiles(of: server.database) }
        let directory = TemporaryDirectory()
        let settings = StoreSettings(remote: server.baseURL, apiVersion: nil, tables: ["TodoItem"])
        let phone = try SyncContext.initialize(directory: directory.file("phone"), settings: settings)
        let tablet = try SyncContext.initialize(directory: directory.file("tablet"), settings: settings)
        let options = SyncOptions(retryPolicy: .none)
        try await phone.table("TodoItem", as: TodoItem.self).insert(
            TodoItem(id: "a", text: "Buy milk", complete: false))
        let pushed = try await phone.push(options: options)
        #expect(pushed.applied == 1)
        let onPhone = try #require(try await phone.table("TodoItem", as: TodoItem.self).read(id: "a"))
        #expect(onPhone.version != nil && onPhone.updatedAt != nil)

        let tabletTodo = try await tablet.table("TodoItem", as: TodoItem.self)
        try await tabletTodo.pull(queryID: "allTodoItems", options: options)
        #expect(try await tabletTodo.read(id: "a") == onPhone)
        await server.stop()
    }
}
