/// A response from the server.
struct HTTPResponse: Sendable, Equatable {
    var status: Int
    /// Header values by lowercased name.
    var headers: [String: String]
    /// The body, decompressed when the server sent it gzip-compressed.
    var body: [UInt8]
    /// How many body bytes crossed the wire (the compressed size when the body came compressed).
    var wireBodySize: Int

    init(status: Int, headers: [String: String] = [:], body: [UInt8] = [], wireBodySize: Int? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.wireBodySize = wireBodySize ?? body.count
    }

    /// The value of header `name` (any case).
    func header(_ name: String) -> String? { headers[name.lowercased()] }
}
