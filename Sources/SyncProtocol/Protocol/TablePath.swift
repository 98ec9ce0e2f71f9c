/// The URL paths of the table protocol.
public enum TablePath {
    /// The prefix of every table route: `/tables/{table}` and `/tables/{table}/{id}`.
    public static let tablesPrefix = "/tables"
    /// The health endpoint of `tablesync-server` (no authentication, no protocol version).
    public static let health = "/health"
    /// The batch endpoint (``ProtocolExtension/batch``, ``BatchRequest``): `POST /batch`.
    public static let batch = "/batch"
    /// The change feed (``ProtocolExtension/changes``, ``ChangeFeed``): `GET /changes`.
    public static let changes = "/changes"

    /// `/tables/{table}`.
    public static func table(_ name: String) -> String { "\(tablesPrefix)/\(percentEncodePathSegment(name))" }

    /// `/tables/{table}/{id}` with the id percent-encoded.
    public static func record(table name: String, id: String) -> String {
        "\(table(name))/\(percentEncodePathSegment(id))"
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters, so any valid id is one path segment.
    public static func percentEncodePathSegment(_ segment: String) -> String {
        percentEncode(segment, keepingDollar: false)
    }

    /// Percent-encodes a query parameter's name or value as ``percentEncodePathSegment(_:)`` does, but keeps `$`,
    /// so that `$filter` and `$top` read as themselves in URLs and logs.
    public static func percentEncodeQueryComponent(_ component: String) -> String {
        percentEncode(component, keepingDollar: true)
    }

    private static func percentEncode(_ text: String, keepingDollar: Bool) -> String {
        var output = ""
        let hex = Array("0123456789ABCDEF")
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "$") where keepingDollar:
                output.append("$")
            default:
                output.append("%")
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0xF)])
            }
        }
        return output
    }
}
