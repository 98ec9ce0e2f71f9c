import Foundation

/// The HTTP proxy a request goes through, chosen from the environment variables that curl (and with it the
/// `URLSession` of Linux) reads, so that a machine set up for those keeps working:
///
/// - `https_proxy` / `HTTPS_PROXY` for `https` URLs; `http_proxy` for `http` URLs (lowercase only, as curl
///   does: a CGI server sets `HTTP_PROXY` from a request header); `all_proxy` / `ALL_PROXY` for either;
/// - `no_proxy` / `NO_PROXY`: a comma-separated list of host names, domain suffixes (`example.com` or
///   `.example.com` also cover `a.example.com`) or `*` for every host.
///
/// Loopback (`localhost`, `127.x.x.x`, `::1`) never goes through a proxy. The proxy URL is `host:port`,
/// `http://host:port` or `http://user:password@host:port`; the port defaults to 1080, as in curl.
enum ProxyEnvironment {
    /// A proxy server.
    struct Proxy: Hashable, Sendable {
        var host: String
        var port: Int
        var user: String?
        var password: String?
    }

    /// The scheme and host of a request's URL.
    struct Target: Equatable, Sendable {
        var scheme: String
        var host: String

        /// The target of `url`; `nil` when it is not an `http` or `https` URL with a host.
        init?(url: String) {
            guard let schemeEnd = url.range(of: "://") else { return nil }
            let scheme = url[..<schemeEnd.lowerBound].lowercased()
            guard scheme == "http" || scheme == "https" else { return nil }
            var rest = url[schemeEnd.upperBound...]
            if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
            if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
            let host: Substring
            if rest.hasPrefix("[") {
                guard let close = rest.firstIndex(of: "]") else { return nil }
                host = rest[rest.index(after: rest.startIndex)..<close]
            } else {
                host = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            }
            guard !host.isEmpty else { return nil }
            self.scheme = scheme
            self.host = host.lowercased()
        }
    }

    /// The proxy for `target` under `environment`, or `nil` for a direct connection.
    static func proxy(for target: Target, environment: [String: String] = processEnvironment) -> Proxy? {
        guard !isLoopback(target.host), !isExcluded(target.host, noProxy: environment["no_proxy"] ?? environment["NO_PROXY"]) else {
            return nil
        }
        let names = target.scheme == "https" ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] : ["http_proxy", "all_proxy", "ALL_PROXY"]
        guard let value = names.lazy.compactMap({ environment[$0] }).first(where: { !$0.isEmpty }) else { return nil }
        return parse(value)
    }

    /// The proxy a variable's value names; `nil` when it names none.
    static func parse(_ value: String) -> Proxy? {
        var rest = Substring(value.trimmingWhitespace())
        if let schemeEnd = rest.range(of: "://") { rest = rest[schemeEnd.upperBound...] }
        if let end = rest.firstIndex(of: "/") { rest = rest[..<end] }
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            user = credentials.first.map { percentDecoded($0) }
            password = credentials.count > 1 ? percentDecoded(credentials[1]) : nil
            rest = rest[rest.index(after: at)...]
        }
        var host = rest
        var port = 1080
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { guard let number = Int(after.dropFirst()) else { return nil }; port = number }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let number = Int(rest[rest.index(after: colon)...]) else { return nil }
            port = number
        }
        guard !host.isEmpty, (1...65_535).contains(port) else { return nil }
        return Proxy(host: String(host), port: port, user: user, password: password)
    }

    /// Whether `no_proxy` exempts `host`.
    static func isExcluded(_ host: String, noProxy: String?) -> Bool {
        guard let noProxy else { return false }
        for entry in noProxy.split(separator: ",") {
            var pattern = String(entry).trimmingWhitespace().lowercased()
            if pattern == "*" { return true }
            if let colon = pattern.lastIndex(of: ":"), !pattern.contains("]"), pattern.filter({ $0 == ":" }).count == 1 {
                pattern = String(pattern[..<colon])
            }
            while pattern.hasPrefix(".") || pattern.hasPrefix("*") { pattern.removeFirst() }
            guard !pattern.isEmpty else { continue }
            if host == pattern || host.hasSuffix("." + pattern) { return true }
        }
        return false
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host == "::1" || host.hasPrefix("127.")
    }

    private static func percentDecoded(_ text: Substring) -> String {
        let input = Array(text.utf8)
        var bytes: [UInt8] = []
        var index = 0
        while index < input.count {
            if input[index] == UInt8(ascii: "%"), index + 2 < input.count,
               let value = UInt8(String(decoding: input[index + 1...index + 2], as: UTF8.self), radix: 16) {
                bytes.append(value)
                index += 3
            } else {
                bytes.append(input[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The process's environment.
    static var processEnvironment: [String: String] { ProcessInfo.processInfo.environment }
}
