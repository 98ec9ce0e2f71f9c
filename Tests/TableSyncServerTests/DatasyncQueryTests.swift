import HTTPTypes
import HummingbirdTesting
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// Queries as Datasync's server answers them (`tests/CommunityToolkit.Datasync.Server.Test/Service/Query_Tests.cs`):
/// `$select` and the refusals of `FailedQueryTest`, over a live server on each database.
@Suite("Datasync queries")
struct DatasyncQueryTests {
    /// Datasync's movie table, declared: `Movie` has these properties besides the system properties.
    static func movies(_ name: String) throws -> TableOptions {
        try TableOptions.parse(
            """
            \(name):columns=bestPictureWinner:boolean;duration:number;rating:string;releaseDate:dateonly;\
            title:string;year:number
            """)
    }

    /// Stores ten movies in `table`.
    static func seed(_ client: any TestClientProtocol, table: String) async throws {
        for index in 0..<10 {
            let movie: JSONValue = [
                "id": .string("id-00\(index)"), "bestPictureWinner": .bool(index % 2 == 0),
                "duration": .integer(Int64(90 + index)), "rating": "R", "releaseDate": "1994-10-14",
                "title": .string("Movie \(index)"), "year": .integer(Int64(1990 + index))
            ]
            try #require(try await client.send(.post, "/tables/\(table)", json: movie).status == .created)
        }
    }

    /// The selections `SelectQueryTest` makes pairwise of `id`, `updatedAt`, `version`, `deleted` and the movie's
    /// properties; a selection of some.
    static let selections: [[String]] = [
        ["id"], ["title"], ["id", "updatedAt", "version", "deleted"], ["id", "title", "year"],
        ["updatedAt", "bestPictureWinner", "duration", "rating", "releaseDate"],
        ["version", "deleted", "rating", "title"], ["deleted", "year"]
    ]

    @Test(
        "Query_Tests.cs SelectQueryTest: each item of a v3 $select page carries exactly the selected properties",
        arguments: Backend.available, selections)
    func select(backend: Backend, selection: [String]) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [try Self.movies(table)], setup: .live) { client in
            try await Self.seed(client, table: table)
            let reply = try await client.send(
                .get, "/tables/\(table)?$top=5&$skip=5&$select=\(selection.joined(separator: ","))")
            #expect(reply.status == .ok, "\(reply.errorMessage ?? "")")
            let items = try #require(try reply.json["items"]?.arrayValue)
            #expect(items.count == 5)
            for item in items { #expect(item.objectValue.map { Set($0.keys) } == Set(selection)) }
        }
        try await forgetDeclaredColumns(backend, tables: [table])
    }

    @Test(
        """
        Query_Tests.cs FailedQueryTest: an unknown property in $filter, $orderby or $select, a bad direction, a \
        $select that is not a list of names, $skip or $top out of range, and geo.distance are 400s naming the fault
        """,
        arguments: Backend.available)
    func failedQueries(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [try Self.movies(table)], setup: .live) { client in
            try await Self.seed(client, table: table)
            let refused: [(query: String, naming: String)] = [
                ("$filter=(year - 1900) ge 100", "$filter"), ("$filter=missing eq 20", "missing"),
                ("$orderby=duration fizz", "fizz"), ("$orderby=missing asc", "missing"), ("$select=foo", "foo"),
                ("$select=year rating", "year rating"), ("$skip=-1", "$skip"), ("$skip=NaN", "$skip"),
                ("$top=-1", "$top"), ("$top=1000000", "$top"), ("$top=NaN", "$top"),
                // KitchenSinkQueryTest_019: geography values are not supported, and the refusal says so.
                ("$filter=geo.distance(pointValue, geography'POINT(-97 38)') lt 0.2", "geo.distance")
            ]
            for (query, naming) in refused {
                let (name, value) = (query.prefix { $0 != "=" }, query.drop { $0 != "=" }.dropFirst())
                let reply = try await client.send(
                    .get, "/tables/\(table)?\(name)=\(TablePath.percentEncodeQueryComponent(String(value)))")
                #expect(reply.status == .badRequest, "\(backend): \(query)")
                #expect(reply.errorMessage?.contains(naming) == true, "\(query): \(reply.errorMessage ?? "")")
            }
        }
        try await forgetDeclaredColumns(backend, tables: [table])
    }

    @Test(
        """
        on a schemaless table $select takes any property name, v3 items carry what a record has of the selection, \
        and v2 items keep the system properties
        """,
        arguments: Backend.available)
    func schemalessSelect(backend: Backend) async throws {
        let table = uniqueTableName("movies")
        try await withServer(backend, tables: [TableOptions(name: table)], setup: .live) { client in
            try await Self.seed(client, table: table)
            let unknown = try await client.send(.get, "/tables/\(table)?$top=2&$select=nosuchfield")
            #expect(unknown.status == .ok)
            #expect(try unknown.json["items"]?.arrayValue == [[:], [:]])
            let some = try await client.send(.get, "/tables/\(table)?$top=1&$select=title,nosuchfield,ID")
            #expect(try some.json["items"]?.arrayValue == [["id": "id-000", "title": "Movie 0"]])
            let v2 = try await client.send(.get, "/tables/\(table)?$top=1&$select=title", version: .v2)
            let item = try #require(try v2.json.arrayValue?.first?.objectValue)
            #expect(Set(item.keys) == Set(["title"]).union(SystemProperty.all))
        }
    }
}
