import SyncProtocol

/// A request to the server, relative to its base URL.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    /// The path, already percent-encoded (`/tables/todo/a%20b`).
    public var path: String
    /// Query parameters, unencoded, in order.
    public var query: [(name: String, value: String)]
    public var headers: [String: String]
    public var body: [UInt8]?

    public init(method: String, path: String, query: [(name: String, value: String)] = [], headers: [String: String] = [:], body: [UInt8]? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.path == rhs.path && lhs.headers == rhs.headers && lhs.body == rhs.body
            && lhs.query.map { [$0.name, $0.value] } == rhs.query.map { [$0.name, $0.value] }
    }

    /// The path and query string, percent-encoded.
    public var pathAndQuery: String {
        guard !query.isEmpty else { return path }
        return path + "?" + query.map { TablePath.percentEncodeQueryComponent($0.name) + "=" + TablePath.percentEncodeQueryComponent($0.value) }.joined(separator: "&")
    }
}
