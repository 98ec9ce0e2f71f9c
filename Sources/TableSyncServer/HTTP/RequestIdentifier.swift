/// The id that ties a request's log lines to its answer (`X-Request-ID`).
enum RequestIdentifier {
    /// The log metadata key of the id: Hummingbird's own, so that its lines and the server's carry the same id.
    static let logMetadataKey = "hb.request.id"
    /// The longest id taken from a client.
    static let maxLength = 128

    /// Whether `value`, sent by a client (or a proxy in front) as `X-Request-ID`, is taken as the request's id: 1 to
    /// ``maxLength`` ASCII letters, digits, `-`, `_`, `.` and `:`, which covers UUIDs and the ids proxies make.
    /// Anything
    /// else gets an id of the server's own instead, so that a log line never holds what a client chose to put there.
    static func accepts(_ value: String) -> Bool {
        let bytes = value.utf8
        return (1...maxLength).contains(bytes.count)
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"):
                    return true
                default:
                    return false
                }
            }
    }
}
