/// The two generations of the table protocol that TableSync speaks.
///
/// `2.0.x` is the Azure Mobile Apps protocol (bare arrays, `$inlinecount`, PATCH merges, 404 for deleted
/// rows); `3.0.x` is the Datasync protocol (`{"items","count","nextLink"}`, `$count`, PUT replaces, 410 for
/// deleted rows, 204 after a delete).
///
/// ```swift
/// ProtocolVersion(headerValue: "3.0.0")   // .v3
/// ProtocolVersion(headerValue: "1.0.0")   // nil
/// ```
public enum ProtocolVersion: String, Sendable, Hashable, CaseIterable {
    case v2 = "2.0.0"
    case v3 = "3.0.0"

    /// The version named by a `ZUMO-API-VERSION` value: `2.0`, `2.0.x`, `3.0` or `3.0.x`; `nil` otherwise.
    public init?(headerValue: String) {
        let value = headerValue.trimmingSpaces()
        for version in ProtocolVersion.allCases {
            let prefix = version == .v2 ? "2.0" : "3.0"
            if value == prefix {
                self = version
                return
            }
            guard value.hasPrefix(prefix + ".") else { continue }
            let patch = value.dropFirst(prefix.count + 1)
            if !patch.isEmpty, patch.allSatisfy(\.isASCIIDigit) {
                self = version
                return
            }
        }
        return nil
    }

    /// The value a client sends in the `ZUMO-API-VERSION` header.
    public var headerValue: String { rawValue }

    /// The page size a server uses when the client gives no `$top` (50 in v2, 100 in v3).
    public var defaultPageSize: Int { self == .v2 ? 50 : 100 }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension String {
    func trimmingSpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
