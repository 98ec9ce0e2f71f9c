@testable import TableSyncServer
import Testing

/// The `Location` of a created record, made absolute from the request's `Host` only when it is plainly a host.
@Suite struct RecordLocationTests {
    static let path = "/tables/todo/a1"

    @Test(
        "a host name, an address or a bracketed IPv6 address, with or without a port, makes the URL absolute",
        arguments: [
            ("sync.example.com", nil, "http://sync.example.com/tables/todo/a1"),
            ("sync.example.com:8443", "https", "https://sync.example.com:8443/tables/todo/a1"),
            ("127.0.0.1:8080", "HTTPS", "https://127.0.0.1:8080/tables/todo/a1"),
            ("[::1]:8080", "http", "http://[::1]:8080/tables/todo/a1"),
            ("[fe80::1]", "gopher", "http://[fe80::1]/tables/todo/a1"),
            ("localhost", " https ", "https://localhost/tables/todo/a1")
        ] as [(String, String?, String)])
    func absolute(host: String, forwardedProto: String?, expected: String) {
        #expect(RecordLocation.url(path: Self.path, host: host, forwardedProto: forwardedProto) == expected)
    }

    @Test(
        "no Host, or one that is not a host, leaves the path relative rather than echoing it",
        arguments: [
            nil, "", "evil.example/<script>", "a b", "user@host", "host:", "host:123456", "host:8o", ":80",
            "[::1", "[]", "[::1]x", "[zz::1]", "exämple.com", "host\r\nSet-Cookie: a=b", "host?x", "host#x",
            String(repeating: "a", count: 256)
        ] as [String?])
    func relative(host: String?) {
        #expect(RecordLocation.url(path: Self.path, host: host, forwardedProto: "https") == Self.path)
    }
}
