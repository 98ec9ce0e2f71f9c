import HTTPTypes
import HummingbirdTesting
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// Writes as Datasync's server answers them (`tests/CommunityToolkit.Datasync.Server.Test/Service/Create_Tests.cs`
/// and `Replace_Tests.cs`), over a live server on each database, and how a request without `ZUMO-API-VERSION` is read.
@Suite("Datasync writes")
struct DatasyncWriteTests {
    static let movie: JSONValue = ["id": "m1", "title": "Black Panther", "year": 2018, "rating": "PG13"]

    /// Stores ``movie`` in `table` and soft-deletes it.
    static func deletedMovie(_ client: any TestClientProtocol, table: String) async throws {
        try #require(try await client.send(.post, "/tables/\(table)", json: movie).status == .created)
        try #require(try await client.send(.delete, "/tables/\(table)/m1").status == .noContent)
    }

    @Test(
        """
        Replace_Tests.cs Replace_SoftDeleted_Undeleting_WithShowDeleted_Returns200: a PUT with __includedeleted=true \
        and deleted false restores a soft-deleted record with the new properties
        """,
        arguments: Backend.available)
    func undeleteByReplace(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            try await Self.deletedMovie(client, table: table)
            let replaced = try await client.send(
                .put, "/tables/\(table)/m1?__includedeleted=true",
                json: ["id": "m1", "title": "New Title", "year": 2018, "deleted": false])
            #expect(replaced.status == .ok, "\(replaced.errorMessage ?? "")")
            let item = try replaced.json
            #expect(item["deleted"] == false)
            #expect(item["title"] == "New Title")
            #expect(item["rating"] == nil, "a PUT replaces the properties")
            #expect(replaced["ETag"] == "\"\(item["version"]?.stringValue ?? "")\"")
            let read = try await client.send(.get, "/tables/\(table)/m1")
            #expect(read.status == .ok)
            #expect(try read.json["title"] == "New Title")
            #expect(try read.json["deleted"] == false)
        }
    }

    @Test(
        """
        Replace_Tests.cs Replace_SoftDeleted_NotUndeleting_Returns410: without __includedeleted a PUT on a \
        soft-deleted record is 410 (v3) or 404 (v2), and so is a PATCH with it; nothing changes
        """,
        arguments: Backend.available)
    func replaceOfDeletedIsGone(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            try await Self.deletedMovie(client, table: table)
            let body: JSONValue = ["id": "m1", "title": "New Title", "deleted": false]
            #expect(try await client.send(.put, "/tables/\(table)/m1", json: body).status == .gone)
            #expect(try await client.send(.put, "/tables/\(table)/m1", version: .v2, json: body).status == .notFound)
            let patched = try await client.send(.patch, "/tables/\(table)/m1?__includedeleted=true", json: body)
            #expect(patched.status == .gone, "PATCH merges into a record; it does not restore one")
            let read = try await client.send(.get, "/tables/\(table)/m1?__includedeleted=true")
            #expect(try read.json["deleted"] == true)
            #expect(try read.json["title"] == "Black Panther")
        }
    }

    @Test(
        """
        Replace_Tests.cs Replace_NotSoftDeleted_Works, with __includedeleted=true: a record that is not deleted is \
        replaced as without it; a deleted one sent with deleted true stays deleted with the new properties
        """,
        arguments: Backend.available)
    func replaceWithIncludeDeleted(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            try #require(
                try await client.send(.post, "/tables/\(table)", json: ["id": "m2", "title": "a"]).status == .created)
            let live = try await client.send(
                .put, "/tables/\(table)/m2?__includedeleted=true", json: ["id": "m2", "title": "b"])
            #expect(live.status == .ok)
            #expect(try live.json["title"] == "b")
            #expect(try live.json["deleted"] == false)
            try await Self.deletedMovie(client, table: table)
            let kept = try await client.send(
                .put, "/tables/\(table)/m1?__includedeleted=true", json: ["id": "m1", "title": "c", "deleted": true])
            #expect(kept.status == .ok, "\(kept.errorMessage ?? "")")
            #expect(try kept.json["deleted"] == true)
            #expect(try kept.json["title"] == "c")
            #expect(try await client.send(.get, "/tables/\(table)/m1").status == .gone)
            let stale = try await client.send(
                .put, "/tables/\(table)/m1?__includedeleted=true", json: ["id": "m1", "deleted": false],
                headers: [.ifMatch: "\"dGVzdA==\""])
            #expect(stale.status == .preconditionFailed, "the preconditions hold for a deleted record too")
        }
    }

    @Test(
        """
        Create_Tests.cs Create_NonJsonData_Returns415 and Replace_Tests.cs Replace_NonJsonData_Returns415: a body \
        sent as text/html is 415 in both versions; JSON types with parameters or a +json suffix are read
        """,
        arguments: Backend.available)
    func nonJSONBodies(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            let html = Array("<html><body><h1>Not JSON</h1></body></html>".utf8)
            let htmlType: HTTPFields = [.contentType: "text/html; charset=utf-8"]
            for version in ProtocolVersion.allCases {
                let created = try await client.send(
                    .post, "/tables/\(table)", version: version, headers: htmlType, rawBody: html)
                #expect(created.status == .unsupportedMediaType, "\(version)")
                #expect(created.errorMessage?.contains("text/html") == true)
                let replaced = try await client.send(
                    .put, "/tables/\(table)/1", version: version, headers: htmlType, rawBody: html)
                #expect(replaced.status == .unsupportedMediaType, "\(version)")
            }
            let json = Array(#"{"id":"j1"}"#.utf8)
            for type in ["application/json; charset=utf-8", "Application/JSON", "application/vnd.example+json"] {
                let reply = try await client.send(
                    .post, "/tables/\(table)", headers: [.contentType: type],
                    rawBody: Array(#"{"title":"x"}"#.utf8))
                #expect(reply.status == .created, "\(type): \(reply.errorMessage ?? "")")
            }
            let untyped = try await client.send(.post, "/tables/\(table)", rawBody: json)
            #expect(untyped.status == .created, "a body without Content-Type is read as JSON")
        }
    }

    @Test(
        """
        Create_Tests.cs Create_WithValidInput_Returns201: Location is the absolute URL of the new record, made of \
        the request's Host (the test client sends localhost), https when a proxy says X-Forwarded-Proto: https
        """,
        arguments: Backend.available)
    func absoluteLocation(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            let created = try await client.send(.post, "/tables/\(table)", json: ["title": "Black Panther"])
            #expect(created.status == .created)
            let id = try #require(try created.json["id"]?.stringValue)
            #expect(created["Location"] == "http://localhost/tables/\(table)/\(id)")
            let proxied = try await client.send(
                .post, "/tables/\(table)", json: ["id": "a b"], headers: [.forwardedProtoForTests: "https"])
            #expect(proxied["Location"] == "https://localhost/tables/\(table)/a%20b")
        }
    }

    @Test(
        """
        a request without ZUMO-API-VERSION speaks version 3, as Datasync's server reads every request; one with \
        2.0.0 keeps version 2; an unknown version is a 400
        """,
        arguments: Backend.available)
    func versionHeader(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            try await Self.deletedMovie(client, table: table)
            let read = try await client.send(.get, "/tables/\(table)/m1", version: nil)
            #expect(read.status == .gone, "a deleted record is 410 in version 3")
            let page = try await client.send(.get, "/tables/\(table)?__includedeleted=true", version: nil)
            #expect(try page.json["items"]?.arrayValue?.count == 1)
            #expect(try await client.send(.get, "/tables/\(table)/m1", version: .v2).status == .notFound)
            let unknown = try await client.send(
                .get, "/tables/\(table)", version: nil, headers: [HTTPField.Name(ProtocolHeader.apiVersion)!: "1.0.0"])
            #expect(unknown.status == .badRequest)
            #expect(unknown.errorMessage?.contains("1.0.0") == true)
        }
    }
}

extension HTTPField.Name {
    /// `X-Forwarded-Proto`, as a reverse proxy in front of the server sets it.
    fileprivate static let forwardedProtoForTests = HTTPField.Name("X-Forwarded-Proto")!
}
