import SyncProtocol

/// Where the rest of a list request's records are, as the query string of the next page (without `?`): the
/// request's own parameters in their order, `$skip` advanced past the page sent and, when the request gave `$top`,
/// `$top` reduced to what it still owes. The rule of Datasync's `TableController.Query.cs` (`BuildPagedResult`,
/// `CreateNextLink`), which Azure's .NET server follows for its `Link` too.
///
/// A v3 answer sends it as `nextLink` alone, for Datasync's clients build the next request as the table's endpoint
/// with `nextLink` as its query (`UriBuilder(endpoint) { Query = nextLink }` in `PullOperationManager.cs`); a v2
/// answer puts it after the table's path in a `Link` header (``TableRoutes``).
enum NextPageLink {
    /// The next page's query string, or `nil` when there is none: no record follows, the page is empty (a link to
    /// the same `$skip` would lead a client round in a circle), or the page completed the `$top` the client gave.
    ///
    /// - Parameters:
    ///   - query: the request's query string.
    ///   - skip: the request's `$skip`.
    ///   - requestedTop: the `$top` the request gave, before the page size capped it; `nil` without one.
    ///   - recordsSent: the records on this page.
    ///   - hasMore: whether more records match after this page.
    static func query(
        of query: QueryString, skip: Int, requestedTop: Int?, recordsSent: Int, hasMore: Bool
    ) -> String? {
        guard hasMore, recordsSent > 0 else { return nil }
        let owed = requestedTop.map { $0 - recordsSent }
        if let owed, owed <= 0 { return nil }
        var parts: [String] = []
        for (name, value) in query.pairs where name != QueryOption.skip && name != QueryOption.top {
            parts.append(
                "\(TablePath.percentEncodeQueryComponent(name))=\(TablePath.percentEncodeQueryComponent(value))")
        }
        parts.append("\(QueryOption.skip)=\(skip + recordsSent)")
        if let owed { parts.append("\(QueryOption.top)=\(owed)") }
        return parts.joined(separator: "&")
    }
}
