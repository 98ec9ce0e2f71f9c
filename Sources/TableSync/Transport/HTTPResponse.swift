/// A response from the server.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    /// Header values by lowercased name.
    public var headers: [String: String]
    /// The body, decompressed when the server sent it gzip-compressed.
    public var body: [UInt8]
    /// How many body bytes crossed the wire (the compressed size when the body came compressed).
    public var wireBodySize: Int

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = [], wireBodySize: Int? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.wireBodySize = wireBodySize ?? body.count
    }

    /// The value of header `name` (any case).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}
