/// One key of `$orderby`: a property and a direction.
public struct OrderByKey: Sendable, Hashable, CustomStringConvertible {
    /// The property name.
    public var property: String
    /// `true` for `desc`.
    public var descending: Bool

    public init(property: String, descending: Bool = false) {
        self.property = property
        self.descending = descending
    }

    /// The key as `$orderby` spells it (`text desc`).
    public var description: String { descending ? "\(property) desc" : property }

    /// Parses `$orderby`: comma-separated `name [asc|desc]` (direction in any case). Throws
    /// ``OrderByParseError`` for an empty key, an unknown direction or a name that is not plain
    /// (``PropertyName/isPlain(_:)``).
    public static func parseList(_ text: String) throws(OrderByParseError) -> [OrderByKey] {
        var keys: [OrderByKey] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let words = part.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let name = words.first.map(String.init), words.count <= 2 else {
                throw OrderByParseError(
                    reason:
                        "$orderby has an empty or malformed key '\(part)'; write name [asc|desc], separated by commas")
            }
            var descending = false
            if words.count == 2 {
                switch words[1].lowercased() {
                case "asc": descending = false
                case "desc": descending = true
                default: throw OrderByParseError(reason: "$orderby direction '\(words[1])' is neither asc nor desc")
                }
            }
            guard PropertyName.isPlain(name) else {
                throw OrderByParseError(
                    reason: "$orderby names '\(name)', which is not a property name (letters, digits and _ only)")
            }
            keys.append(OrderByKey(property: name, descending: descending))
        }
        return keys
    }

    /// `$orderby` text for `keys`.
    public static func print(_ keys: [OrderByKey]) -> String {
        keys.map(\.description).joined(separator: ",")
    }
}

/// Why an `$orderby` text was refused.
public struct OrderByParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, naming the offending key.
    public let reason: String
    public var description: String { reason }
}
