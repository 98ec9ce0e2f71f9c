/// The parameters of a URL query string, decoded as HTML forms and Azure's servers decode them:
/// `+` is a space, `%XX` a byte of UTF-8.
struct QueryString: Sendable {
    /// Name-value pairs in order; a name without `=` has the empty value.
    let pairs: [(name: String, value: String)]

    /// The empty query string.
    init() { pairs = [] }

    /// Decodes `query` (the part after `?`, without it). Throws for a malformed `%` escape or invalid UTF-8.
    init(_ query: String?) throws(ProtocolError) {
        guard let query, !query.isEmpty else {
            pairs = []
            return
        }
        var pairs: [(String, String)] = []
        for component in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = component.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.decode(parts[0])
            let value = parts.count > 1 ? try Self.decode(parts[1]) : ""
            pairs.append((name, value))
        }
        self.pairs = pairs
    }

    /// The value of the parameter named exactly `name`; throws when it is given more than once.
    func value(named name: String) throws(ProtocolError) -> String? {
        try value { $0 == name }
    }

    /// The value of the parameter named `name` in any case; throws when it is given more than once.
    func value(namedIgnoringCase name: String) throws(ProtocolError) -> String? {
        try value { $0.caseInsensitiveEquals(name) }
    }

    private func value(where matches: (String) -> Bool) throws(ProtocolError) -> String? {
        let found = pairs.filter { matches($0.name) }
        guard found.count <= 1 else {
            throw ProtocolError.badRequest(
                "the query parameter \(found[0].name) is given \(found.count) times; give it once")
        }
        return found.first?.value
    }

    /// Percent-decodes a segment of a URL's path, where `+` is itself.
    static func decodePathSegment(_ text: Substring) throws(ProtocolError) -> String {
        try decode(text, plusIsSpace: false, part: "the URL path")
    }

    /// Percent-decodes `text`; `+` is a space in query strings, itself in paths. `part` names where `text` comes
    /// from in errors.
    static func decode(
        _ text: Substring, plusIsSpace: Bool = true, part: String = "the query string"
    ) throws(ProtocolError) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    throw ProtocolError.badRequest("\(part) has a malformed %-escape in '\(text)'; write % as %25")
                }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw ProtocolError.badRequest(
                "\(part) is not valid UTF-8 after decoding '\(text)'; percent-encode the UTF-8 bytes of each character")
        }
        return decoded
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
