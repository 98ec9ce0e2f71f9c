import SyncProtocol

/// The values both databases can store, checked before any write: a record that one database would refuse is
/// refused on both, with a 400 that names the record and the property, instead of being stored by SQLite and
/// answered 500 by PostgreSQL.
///
/// PostgreSQL's `jsonb` cannot hold the character U+0000 in a string or a property name (SQLSTATE 22P05); every
/// other JSON value that ``JSONParser`` accepts (finite numbers, paired surrogates, at most
/// ``RecordNesting/maximumDepth`` levels, which every envelope of the protocol can carry) fits both, and
/// ``ServerConfiguration/largestMaxBodySize`` keeps every body under `jsonb`'s size limit.
enum StorableProperties {
    /// The path of the first value in `properties` that a database cannot store (`text`, `tags[2]`,
    /// `address.street`), in key order, or `nil` when every value fits.
    static func firstUnstorable(in properties: [String: JSONValue]) -> String? {
        // The ordered search that names the property runs only for a record that holds U+0000 somewhere.
        guard properties.contains(where: { holdsNUL($0.key) || holdsNUL($0.value) }) else { return nil }
        return firstUnstorable(members: properties, prefix: nil)
    }

    /// Throws the refusal of record `id` of `table` when one of its `properties` cannot be stored, or when it nests
    /// deeper than the protocol's envelopes can carry (``RecordNesting``): refused alike by the single routes and
    /// by each operation of a batch.
    static func check(_ properties: [String: JSONValue], table: String, id: String) throws(ProtocolError) {
        if let problem = RecordNesting.problem(with: properties) {
            throw ProtocolError.badRequest("table \(table), record '\(id)': \(problem)")
        }
        guard let path = firstUnstorable(in: properties) else { return }
        throw ProtocolError.badRequest(
            """
            table \(table), record '\(id)': the property '\(path)' holds the character U+0000 (\\u0000), which the \
            database cannot store; remove it or replace it, e.g. with U+FFFD
            """
        )
    }

    private static func firstUnstorable(members: [String: JSONValue], prefix: String?) -> String? {
        for name in members.keys.sorted() {
            let path = prefix.map { "\($0).\(displayName(name))" } ?? displayName(name)
            if holdsNUL(name) { return path }
            if let found = firstUnstorable(members[name]!, path: path) { return found }
        }
        return nil
    }

    private static func firstUnstorable(_ value: JSONValue, path: String) -> String? {
        switch value {
        case .string(let text):
            return holdsNUL(text) ? path : nil
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = firstUnstorable(item, path: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let members):
            return firstUnstorable(members: members, prefix: path)
        case .null, .bool, .integer, .double:
            return nil
        }
    }

    /// A property name as an error message shows it: U+0000 written `\u0000`, so the message stays text.
    private static func displayName(_ name: String) -> String {
        holdsNUL(name) ? name.replacingNUL() : name
    }

    private static func holdsNUL(_ text: String) -> Bool { text.utf8.contains(0) }

    private static func holdsNUL(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let text): return holdsNUL(text)
        case .array(let items): return items.contains(where: holdsNUL)
        case .object(let members): return members.contains { holdsNUL($0.key) || holdsNUL($0.value) }
        case .null, .bool, .integer, .double: return false
        }
    }
}

extension String {
    fileprivate func replacingNUL() -> String {
        var result = ""
        for scalar in unicodeScalars { result += scalar == "\u{0}" ? "\\u0000" : String(scalar) }
        return result
    }
}
