import SyncProtocol
@testable import TableSyncServer
import Testing

/// The next page's query string (``NextPageLink``), as Datasync's `TableController.Query.cs` computes it
/// (`BuildPagedResult`, `CreateNextLink`), and the `$top` a page may hold in v2 and v3.
@Suite("Next page link")
struct NextPageLinkTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let query: String
        let skip: Int
        let requestedTop: Int?
        let sent: Int
        let hasMore: Bool
        let expected: String?
    }

    static let cases: [Case] = [
        Case(
            testDescription: "a pull without $top (PullOperationManager's first page): the query with $skip",
            query: "$orderby=updatedAt&$count=true&__includedeleted=true", skip: 0, requestedTop: nil, sent: 100,
            hasMore: true, expected: "$orderby=updatedAt&$count=true&__includedeleted=true&$skip=100"),
        Case(
            testDescription: "a later page: $skip replaced, in the place Datasync puts it (last)",
            query: "$skip=100&$orderby=updatedAt&$count=true", skip: 100, requestedTop: nil, sent: 100,
            hasMore: true, expected: "$orderby=updatedAt&$count=true&$skip=200"),
        Case(
            testDescription: "the last page: no link",
            query: "$orderby=updatedAt&$skip=200", skip: 200, requestedTop: nil, sent: 48, hasMore: false,
            expected: nil),
        Case(
            testDescription: "$top satisfied: no link, though more records match",
            query: "$top=5", skip: 0, requestedTop: 5, sent: 5, hasMore: true, expected: nil),
        Case(
            testDescription: "$top above the page size: $top reduced to the rest",
            query: "$top=125&$count=true", skip: 0, requestedTop: 125, sent: 100, hasMore: true,
            expected: "$count=true&$skip=100&$top=25"),
        Case(
            testDescription: "a page ended early by its bytes: $top reduced by the records sent, $skip advanced",
            query: "$filter=done%20eq%20false&$skip=20&$top=50", skip: 20, requestedTop: 50, sent: 10, hasMore: true,
            expected: "$filter=done%20eq%20false&$skip=30&$top=40"),
        Case(
            testDescription: "an empty page ($top=0): no link, which would lead round in a circle",
            query: "$top=0", skip: 0, requestedTop: 0, sent: 0, hasMore: true, expected: nil),
        Case(
            testDescription: "values re-encoded, the version parameter kept",
            query: "ZUMO-API-VERSION=3.0.0&$filter=title%20eq%20%27a%26b%27", skip: 0, requestedTop: nil, sent: 1,
            hasMore: true, expected: "ZUMO-API-VERSION=3.0.0&$filter=title%20eq%20%27a%26b%27&$skip=1")
    ]

    @Test("the next page's query string", arguments: cases)
    func nextPage(_ example: Case) throws {
        let link = NextPageLink.query(
            of: try QueryString(example.query), skip: example.skip, requestedTop: example.requestedTop,
            recordsSent: example.sent, hasMore: example.hasMore)
        #expect(link == example.expected)
    }

    @Test("v3 caps $top at the page size (the table's, 100 by default); v2 serves $top whole, as node does")
    func topCappedInV3() throws {
        let query = try QueryString("$top=125")
        let v3 = try ListQuery.parse(query, version: .v3, table: TableOptions(name: "movies"))
        #expect(v3.top == 100)
        #expect(v3.requestedTop == 125)
        let configured = try ListQuery.parse(query, version: .v3, table: TableOptions(name: "movies", pageSize: 20))
        #expect(configured.top == 20)
        let v2 = try ListQuery.parse(query, version: .v2, table: TableOptions(name: "movies"))
        #expect(v2.top == 125)
        let none = try ListQuery.parse(QueryString(), version: .v3, table: TableOptions(name: "movies"))
        #expect(none.top == 100)
        #expect(none.requestedTop == nil)
    }

    @Test("a query string holding another URL's path and query is refused, naming the parameter")
    func nestedQueryRefused() throws {
        // What UriBuilder(endpoint) { Query = nextLink } makes of a nextLink that holds the path.
        let mangled = try QueryString("/tables/movies?$orderby=updatedAt&$count=true&$skip=100")
        for version in ProtocolVersion.allCases {
            #expect {
                try ListQuery.parse(mangled, version: version, table: TableOptions(name: "movies"))
            } throws: { error in
                (error as? ProtocolError)?.message.contains("'/tables/movies?$orderby'") == true
            }
        }
        let questionInValue = try QueryString("$filter=title%20eq%20%27why%3F%27")
        #expect(throws: Never.self) {
            try ListQuery.parse(questionInValue, version: .v3, table: TableOptions(name: "movies"))
        }
    }
}
