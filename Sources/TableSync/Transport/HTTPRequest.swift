import SyncProtocol

/// A request to the server, relative to its base URL.
struct HTTPRequest: Sendable, Equatable {
    var method: String
    /// The path, already percent-encoded (`/tables/todo/a%20b`).
    var path: String
    /// Query parameters, unencoded, in order.
    var query: [(name: String, value: String)]
    var headers: [String: String]
    var body: [UInt8]?

    init(
        method: String, path: String, query: [(name: String, value: String)] = [], headers: [String: String] = [:],
        body: [UInt8]? = nil
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.path == rhs.path && lhs.headers == rhs.headers && lhs.body == rhs.body
            && lhs.query.map { [$0.name, $0.value] } == rhs.query.map { [$0.name, $0.value] }
    }

    /// The path and query string, percent-encoded.
    var pathAndQuery: String {
        guard !query.isEmpty else { return path }
        return path + "?"
            + query.map {
                TablePath.percentEncodeQueryComponent($0.name) + "=" + TablePath.percentEncodeQueryComponent($0.value)
            }.joined(separator: "&")
    }
}
