/// The `Location` of a record a `POST` created: an absolute URL, as Datasync's server answers, made of the scheme
/// the request reached the server by and its `Host`.
///
/// ```swift
/// RecordLocation.url(path: "/tables/todo/a1", host: "sync.example.com", forwardedProto: "https")
/// // "https://sync.example.com/tables/todo/a1"
/// RecordLocation.url(path: "/tables/todo/a1", host: "evil\r\nX: y", forwardedProto: nil)
/// // "/tables/todo/a1": a Host that is not a host name is not echoed
/// ```
enum RecordLocation {
    /// `path` made absolute with `host` (the request's `Host`) and the scheme: `https` when a proxy in front says so
    /// in `X-Forwarded-Proto` (docs/deploy.md), `http` otherwise, since the server itself serves plain HTTP. Without a
    /// `Host`, or with one that is not a host name, an IPv4 or bracketed IPv6 address and an optional port, `path`
    /// stays relative: what a client sent is not echoed into a header unless it is plainly a host.
    static func url(path: String, host: String?, forwardedProto: String?) -> String {
        guard let host, isHost(host) else { return path }
        let scheme = forwardedProto.map { $0.trimmingCharacters(in: " ").lowercased() } == "https" ? "https" : "http"
        return "\(scheme)://\(host)\(path)"
    }

    /// Whether `text` is `name[:port]` or `[ipv6][:port]`: a name of letters, digits, `-` and `.` (255 bytes at
    /// most), an address of hexadecimal digits, `:` and `.` in brackets, a port of 1–5 digits.
    static func isHost(_ text: String) -> Bool {
        var rest = Substring(text)
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return false }
            let address = rest[rest.index(after: rest.startIndex)..<close]
            guard !address.isEmpty, address.allSatisfy({ ($0.isASCII && $0.isHexDigit) || $0 == ":" || $0 == "." })
            else {
                return false
            }
            rest = rest[rest.index(after: close)...]
        } else {
            let name = rest.prefix { $0 != ":" }
            guard !name.isEmpty, name.utf8.count <= 255,
                name.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "." })
            else { return false }
            rest = rest[name.endIndex...]
        }
        guard !rest.isEmpty else { return true }
        let port = rest.dropFirst()
        return rest.first == ":" && (1...5).contains(port.count) && port.allSatisfy({ $0.isASCII && $0.isNumber })
    }
}
