import Foundation
import HTTPTypes
import HummingbirdTesting
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// Paging as Datasync's clients page (protocol v3) and as Azure's v2 peers do, over a live server on each database.
@Suite("Datasync paging")
struct DatasyncPagingTests {
    static let movieCount = 248
    static let ratings = ["G", "PG", "PG13", "R", "NC17", "Unrated"]

    /// Movie `index` with the properties of Datasync's movie data (`TestData/Movies.cs`, ids `id-000` to `id-247`),
    /// made up from the index; every sixth is rated R.
    static func movie(_ index: Int) -> JSONValue {
        let year = 1920 + index * 37 % 100
        return [
            "id": .string(String(format: "id-%03d", index)),
            "title": .string("Movie \(index)"),
            "year": .integer(Int64(year)),
            "rating": .string(ratings[index % ratings.count]),
            "duration": .integer(Int64(80 + index * 13 % 120)),
            "bestPictureWinner": .bool(index % 7 == 0),
            "releaseDate": .string(
                String(format: "%04d-%02d-%02dT00:00:00.000Z", year, 1 + index % 12, 1 + index % 28))
        ]
    }

    /// The request `UriBuilder(endpoint) { Query = query }.Uri` makes in Datasync's clients: the query is put after
    /// the endpoint's path with a `?` unless it starts with one.
    static func datasyncRequest(endpoint: String, query: String) -> String {
        query.hasPrefix("?") ? endpoint + query : "\(endpoint)?\(query)"
    }

    /// Inserts the movies in an order unlike their ids', then soft-deletes the R-rated ones: the order of
    /// `updatedAt` differs from the order of ids, so a page read in another order than the one asked shows.
    static func seedMovies(_ client: any TestClientProtocol, table: String) async throws -> Set<String> {
        for step in 0..<movieCount {
            // 97 is prime to 248: every index once.
            let index = step * 97 % movieCount
            let created = try await client.send(.post, "/tables/\(table)", json: movie(index))
            try #require(created.status == .created)
        }
        var deleted: Set<String> = []
        for index in stride(from: 3, to: movieCount, by: ratings.count) {
            let id = String(format: "id-%03d", index)
            try #require(try await client.send(.delete, "/tables/\(table)/\(id)").status == .noContent)
            deleted.insert(id)
        }
        return deleted
    }

    /// Pulls as Datasync's offline client does (`PullOperationManager.cs`): the first request asks
    /// `$orderby=updatedAt&$count=true&__includedeleted=true` (and the delta token's `$filter`), each next one is
    /// the endpoint with the page's `nextLink` as its query, until a page has none. Returns the items in order.
    static func pullAsDatasync(
        _ client: any TestClientProtocol, table: String, filter: String? = nil
    ) async throws -> (items: [JSONValue], pages: Int) {
        let endpoint = "/tables/\(table)"
        var query = "$orderby=updatedAt&$count=true&__includedeleted=true"
        if let filter { query = "$filter=\(TablePath.percentEncodeQueryComponent(filter))&\(query)" }
        var target = datasyncRequest(endpoint: endpoint, query: query)
        var items: [JSONValue] = []
        var pages = 0
        while pages <= movieCount {
            let page = try await client.send(.get, target)
            try #require(page.status == .ok, "\(target): \(page.errorMessage ?? "")")
            let body = try page.json
            items += body["items"]?.arrayValue ?? []
            pages += 1
            guard let nextLink = body["nextLink"]?.stringValue, !nextLink.isEmpty else { break }
            target = datasyncRequest(endpoint: endpoint, query: nextLink)
        }
        return (items, pages)
    }

    @Test(
        "a pull made as Datasync's PullOperationManager.cs makes it delivers each of 248 movies once, deletions too",
        arguments: Backend.available)
    func datasyncPullDeliversEveryRecordOnce(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            let deleted = try await Self.seedMovies(client, table: table)
            let (items, pages) = try await Self.pullAsDatasync(client, table: table)
            let ids = items.compactMap { $0["id"]?.stringValue }
            #expect(ids.count == Self.movieCount)
            #expect(Set(ids).count == Self.movieCount, "records delivered twice")
            #expect(Set(ids) == Set((0..<Self.movieCount).map { String(format: "id-%03d", $0) }))
            #expect(Set(items.filter { $0["deleted"] == true }.compactMap { $0["id"]?.stringValue }) == deleted)
            #expect(pages == 3, "pages of 100, 100 and 48")
            let stamps = items.compactMap { $0["updatedAt"]?.stringValue }
            #expect(stamps == stamps.sorted(), "not in updatedAt order")

            // The next pull asks only what changed since the last updatedAt it saw (its delta token).
            let token = try #require(stamps.last)
            var changed: Set<String> = []
            for index in [0, 10, 20, 30, 40] {
                let id = String(format: "id-%03d", index)
                let reply = try await client.send(.patch, "/tables/\(table)/\(id)", json: ["title": "changed"])
                try #require(reply.status == .ok)
                changed.insert(id)
            }
            for index in [1, 11, 25] {
                let id = String(format: "id-%03d", index)
                try #require(try await client.send(.delete, "/tables/\(table)/\(id)").status == .noContent)
                changed.insert(id)
            }
            let delta = try await Self.pullAsDatasync(
                client, table: table, filter: "(updatedAt gt cast(\(token),Edm.DateTimeOffset))")
            let deltaIDs = delta.items.compactMap { $0["id"]?.stringValue }
            #expect(deltaIDs.count == changed.count)
            #expect(Set(deltaIDs) == changed)
        }
    }

    @Test("nextLink is the query string alone, which Datasync's clients put after the table's path")
    func nextLinkIsTheQueryString() async throws {
        let table = uniqueTableName("movies")
        try await withServer(.sqlite, tables: [TableOptions(name: table)], setup: .live) { client in
            _ = try await Self.seedMovies(client, table: table)
            let page = try await client.send(.get, "/tables/\(table)?$orderby=updatedAt&$count=true")
            #expect(try page.json["nextLink"] == "$orderby=updatedAt&$count=true&$skip=100")
        }
    }

    @Test(
        "a query string holding a link with its path is refused with 400, not answered as another query",
        arguments: Backend.available)
    func nestedQueryRefused(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            _ = try await client.send(.post, "/tables/\(table)", json: Self.movie(0))
            // UriBuilder(endpoint) { Query = "/tables/movies?$orderby=updatedAt&$skip=100" }
            let mangled = Self.datasyncRequest(
                endpoint: "/tables/\(table)", query: "/tables/\(table)?$orderby=updatedAt&$count=true&$skip=100")
            let reply = try await client.send(.get, mangled)
            #expect(reply.status == .badRequest)
            #expect(reply.errorMessage?.contains("'/tables/\(table)?$orderby'") == true, "\(reply.errorMessage ?? "")")
        }
    }

    @Test(
        "v3 as Datasync's Query_Tests.cs (Query_Test_067): $top above the page size gives 100 and a link to the rest",
        arguments: Backend.available)
    func topAbovePageSize(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            let deleted = try await Self.seedMovies(client, table: table)
            let first = try await client.send(.get, "/tables/\(table)?$count=true&$top=125")
            #expect(try first.json["items"]?.arrayValue?.count == 100)
            #expect(try first.json["count"] == .integer(Int64(Self.movieCount - deleted.count)))
            let nextLink = try #require(try first.json["nextLink"]?.stringValue)
            #expect(nextLink == "$count=true&$skip=100&$top=25")
            let rest = try await client.send(.get, Self.datasyncRequest(endpoint: "/tables/\(table)", query: nextLink))
            #expect(try rest.json["items"]?.arrayValue?.count == 25)
            #expect(try rest.json["nextLink"] == .null)
        }
    }

    @Test(
        "v3 for a client that asks for whole pages (TableSync's own): $top served in one page, up to maxTop",
        arguments: Backend.available)
    func wholePagesOnRequest(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            let deleted = try await Self.seedMovies(client, table: table)
            let whole: HTTPFields = [
                HTTPField.Name(ProtocolHeader.extensions)!: ProtocolExtension.wholePages.rawValue
            ]
            let page = try await client.send(.get, "/tables/\(table)?$top=125", headers: whole)
            #expect(try page.json["items"]?.arrayValue?.count == 125)
            #expect(try page.json["nextLink"] == .null, "$top is satisfied")
            let all = try await client.send(.get, "/tables/\(table)?$top=1000", headers: whole)
            #expect(try all.json["items"]?.arrayValue?.count == Self.movieCount - deleted.count)
        }
    }

    @Test("v3: no nextLink once $top is satisfied, though more records match", arguments: Backend.available)
    func noLinkOnceTopIsSatisfied(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            _ = try await Self.seedMovies(client, table: table)
            let page = try await client.send(.get, "/tables/\(table)?$top=5&$skip=5")
            #expect(try page.json["items"]?.arrayValue?.count == 5)
            #expect(try page.json["nextLink"] == .null)
        }
    }

    @Test(
        "v2 as azure-mobile-apps-node: $top served whole up to maxTop, no Link once it is satisfied",
        arguments: Backend.available)
    func v2ServesTopWhole(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            _ = try await Self.seedMovies(client, table: table)
            let large = try await client.send(.get, "/tables/\(table)?$top=125", version: .v2)
            #expect(try large.json.arrayValue?.count == 125)
            #expect(large["Link"] == nil)
            let small = try await client.send(.get, "/tables/\(table)?$top=5", version: .v2)
            #expect(try small.json.arrayValue?.count == 5)
            #expect(small["Link"] == nil)
        }
    }
}
