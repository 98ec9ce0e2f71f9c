import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import SyncProtocol
@testable import TableSyncServer
import Testing
import TestSupport

/// Requests that are wrong in small ways, each answered with a JSON error that says what to change, on a live server.
@Suite("Hostile requests")
struct HostileRequestTests {
    @Test(
        "a method a path is not served with is a JSON 405 with Allow; a path nobody serves a JSON 404",
        arguments: Backend.available)
    func wrongMethod(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            let onTable = try await client.send(.delete, "/tables/\(table)")
            #expect(onTable.status == .methodNotAllowed)
            #expect(onTable["Allow"] == "GET, POST")
            #expect(onTable.errorMessage?.contains("DELETE is not allowed") == true, "\(onTable.errorMessage ?? "")")
            let onRecord = try await client.send(.options, "/tables/\(table)/a")
            #expect(onRecord.status == .methodNotAllowed)
            #expect(onRecord["Allow"] == "GET, PATCH, PUT, DELETE, POST")
            let onBatch = try await client.send(.get, "/batch")
            #expect(onBatch.status == .methodNotAllowed && onBatch["Allow"] == "POST")
            let nowhere = try await client.send(.get, "/nothing/here")
            #expect(nowhere.status == .notFound && nowhere.errorMessage != nil)
        }
    }

    @Test(
        "the paths and their methods",
        arguments: [
            ("/health", true, [HTTPRequest.Method.get] as [HTTPRequest.Method]?),
            ("/batch", true, [.post]),
            ("/batch", false, nil),
            ("/tables/todo", true, [.get, .post]),
            ("/tables/todo/", true, [.get, .post]),
            ("/tables/todo/a1", true, [.get, .patch, .put, .delete, .post]),
            ("/tables", true, nil),
            ("/tables/todo/a1/more", true, nil),
            ("/other/todo", true, nil)
        ])
    func routeMethods(path: String, batch: Bool, methods: [HTTPRequest.Method]?) {
        #expect(RouteMethods.allowed(path: path, batch: batch) == methods)
    }

    @Test(
        "invalid UTF-8 in the path is reported as the path's; in the query as the query's", arguments: Backend.available
    )
    func invalidUTF8(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            let inID = try await client.send(.get, "/tables/\(table)/a%FFb")
            #expect(inID.status == .badRequest)
            #expect(
                inID.errorMessage?.contains("the URL path is not valid UTF-8") == true, "\(inID.errorMessage ?? "")")
            let inTable = try await client.send(.get, "/tables/t%C3")
            #expect(inTable.status == .badRequest)
            #expect(inTable.errorMessage?.contains("the URL path") == true, "\(inTable.errorMessage ?? "")")
            let inQuery = try await client.send(.get, "/tables/\(table)?$filter=text%20eq%20'%FF'")
            #expect(inQuery.status == .badRequest)
            #expect(inQuery.errorMessage?.contains("the query string") == true, "\(inQuery.errorMessage ?? "")")
        }
    }

    @Test("$top=0 answers no records and no nextLink", arguments: Backend.available)
    func topZero(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            _ = try await client.send(.post, "/tables/\(table)", json: ["id": "a"])
            let page = try await client.send(.get, "/tables/\(table)?$top=0&$count=true")
            #expect(page.status == .ok)
            #expect(try page.json["items"]?.arrayValue?.isEmpty == true)
            #expect(try page.json["nextLink"] == .null)
            #expect(try page.json["count"] == 1)
        }
    }

    @Test("a fault of the server is a JSON 500 that says where to look, not an empty answer")
    func serverFault() async throws {
        struct Fault: Error {}
        let router = Router(context: TableRequestContext.self)
        router.add(
            middleware: ProtocolResponseMiddleware(extensions: [], writer: ResponseWriter(gzipMinimumSize: 1024)))
        router.get("/fault") { _, _ -> Response in throw Fault() }
        // The fault is logged at `error`, which this test expects and need not print.
        var logger = Logger(label: "tablesync-server-tests")
        logger.logLevel = .critical
        try await Application(router: router, logger: logger).test(.router) { client in
            let answer = try await client.send(.get, "/fault")
            #expect(answer.status == .internalServerError)
            #expect(answer.errorMessage == "the server failed to process the request; see its log")
        }
    }

    @Test("a body that gives id twice, as id and ID, is refused with 400 naming both", arguments: Backend.available)
    func idInTwoCases(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            let insert = try await client.send(.post, "/tables/\(table)", json: ["id": "a", "ID": "b", "text": "x"])
            #expect(insert.status == .badRequest)
            #expect(insert.errorMessage?.contains("'ID' and 'id'") == true, "\(insert.errorMessage ?? "")")
            #expect(try await client.send(.get, "/tables/\(table)/a").status == .notFound)
            #expect(try await client.send(.get, "/tables/\(table)/b").status == .notFound)
            _ = try await client.send(.post, "/tables/\(table)", json: ["id": "c"])
            let update = try await client.send(.put, "/tables/\(table)/c", json: ["id": "c", "Id": "c", "text": "y"])
            #expect(update.status == .badRequest)
            #expect(update.errorMessage?.contains("'Id' and 'id'") == true, "\(update.errorMessage ?? "")")
        }
    }

    @Test("$orderby takes at most 8 keys; a 9th is refused with 400 naming $orderby", arguments: Backend.available)
    func orderByKeyLimit(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            _ = try await client.send(.post, "/tables/\(table)", json: ["id": "a"])
            let keys = (0..<ListQuery.maximumOrderByKeys).map { "p\($0)" }
            let most = try await client.send(.get, "/tables/\(table)?$orderby=\(keys.joined(separator: ","))")
            #expect(most.status == .ok)
            let nine = (keys + ["p8"]).joined(separator: ",")
            let over = try await client.send(.get, "/tables/\(table)?$orderby=\(nine)")
            #expect(over.status == .badRequest)
            #expect(over.errorMessage?.hasPrefix("$orderby names 9 keys") == true, "\(over.errorMessage ?? "")")
            let thousand = (0..<1000).map { "p\($0)" }.joined(separator: ",")
            let huge = try await client.send(.get, "/tables/\(table)?$orderby=\(thousand)")
            #expect(huge.status == .badRequest)
            #expect(huge.errorMessage?.contains("$orderby") == true, "\(huge.errorMessage ?? "")")
        }
    }

    @Test(
        "$filter names at most 32 distinct properties, each as often as it likes; a 33rd is refused with 400",
        arguments: Backend.available)
    func filterPropertyLimit(backend: Backend) async throws {
        let table = uniqueTableName()
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            _ = try await client.send(.post, "/tables/\(table)", json: ["id": "a", "p31": 1])
            func query(_ halves: [Range<Int>], times: Int = 1) -> String {
                let text = halves.map { names in
                    "(" + (0..<times).flatMap { _ in names.map { "p\($0) eq 1" } }.joined(separator: " or ") + ")"
                }.joined(separator: " or ")
                return "/tables/\(table)?$filter="
                    + (text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text)
            }
            let most = try await client.send(.get, query([0..<16, 16..<32]))
            #expect(most.status == .ok, "\(most.errorMessage ?? "")")
            #expect(try most.json["items"]?.arrayValue?.count == 1)
            let repeated = try await client.send(.get, query([0..<2], times: 10))
            #expect(repeated.status == .ok, "\(repeated.errorMessage ?? "")")
            let over = try await client.send(.get, query([0..<16, 16..<33]))
            #expect(over.status == .badRequest)
            #expect(
                over.errorMessage?.hasPrefix("$filter names 33 properties; give at most 32") == true,
                "\(over.errorMessage ?? "")")
        }
    }
}
