import SyncProtocol

/// One key of `$orderby`: a property and a direction.
public struct OrderByKey: Sendable, Hashable {
    /// The property name as the client wrote it (system properties match without regard to case).
    public var property: String
    /// `true` for `desc`.
    public var descending: Bool

    public init(property: String, descending: Bool = false) {
        self.property = property
        self.descending = descending
    }

    /// Parses `$orderby`: comma-separated `name [asc|desc]`. Throws for an empty key, an unknown direction or a
    /// name that is neither a system property nor a plain identifier.
    public static func parseList(_ text: String) throws(ProtocolError) -> [OrderByKey] {
        var keys: [OrderByKey] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let words = part.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let name = words.first.map(String.init), words.count <= 2 else {
                throw ProtocolError.badRequest("$orderby has an empty or malformed key '\(part)'; write name [asc|desc], separated by commas")
            }
            var descending = false
            if words.count == 2 {
                switch words[1].lowercased() {
                case "asc": descending = false
                case "desc": descending = true
                default: throw ProtocolError.badRequest("$orderby direction '\(words[1])' is neither asc nor desc")
                }
            }
            guard SystemProperty.isSystemProperty(name) || FilterSQLTranslator.isPlainIdentifier(name) else {
                throw ProtocolError.badRequest("$orderby names '\(name)', which is not a property name (letters, digits and _ only)")
            }
            if name.caseInsensitiveEquals(SystemProperty.version) {
                throw ProtocolError.badRequest("$orderby cannot use version; it is an opaque token")
            }
            keys.append(OrderByKey(property: name, descending: descending))
        }
        return keys
    }
}
