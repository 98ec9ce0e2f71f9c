import SyncProtocol

/// Checks records that come from the server before anything is written: the one gate between the network and
/// the file system.
///
/// A record must be a JSON object with an `id` that follows ``RecordID`` (so `../../x`, `..` or ids with `/` or
/// control characters never become paths), a `version` string without control characters (it goes into
/// `If-Match` headers and the index), and, where required, an `updatedAt` that parses as a ``Timestamp``.
/// `deleted`, when present, must be a boolean.
enum ServerRecord {
    struct Problem: Error, Equatable, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    /// The checked record; `requireUpdatedAt` for pulled records, whose `updatedAt` drives the watermark.
    static func check(_ value: JSONValue, requireUpdatedAt: Bool) throws(Problem) -> [String: JSONValue] {
        guard case .object(let record) = value else { throw Problem(reason: "a record must be a JSON object, found \(value.typeName)") }
        guard let id = record[SystemProperty.id]?.stringValue else {
            throw Problem(reason: "a record has no \"id\" string")
        }
        if let problem = RecordID.problem(with: id) { throw Problem(reason: "record id \(id.debugDescription): \(problem)") }
        switch record[SystemProperty.version] {
        case nil, .null?: break
        case .string(let version)?:
            if version.containsControlCharacter {
                throw Problem(reason: "record \(id): \"version\" contains control characters")
            }
        case let other?: throw Problem(reason: "record \(id): \"version\" must be a string, found \(other.typeName)")
        }
        switch record[SystemProperty.deleted] {
        case nil, .null?, .bool?: break
        case let other?: throw Problem(reason: "record \(id): \"deleted\" must be a boolean, found \(other.typeName)")
        }
        switch record[SystemProperty.updatedAt] {
        case .string(let text)?:
            if Timestamp(parsing: text) == nil { throw Problem(reason: "record \(id): \"updatedAt\" \(text.debugDescription) is not a date") }
        case nil, .null?:
            if requireUpdatedAt { throw Problem(reason: "record \(id) has no \"updatedAt\"") }
        case let other?:
            throw Problem(reason: "record \(id): \"updatedAt\" must be a string, found \(other.typeName)")
        }
        return record
    }

    /// `true` when `record` carries what only the server writes: a `version` and an `updatedAt` date. A 409 or
    /// 412 body is the server's copy only then; azure-mobile-apps-node answers a duplicate insert with the item
    /// it was sent, which, taken for the server's copy, would count the insert as applied and lose it.
    static func isServerCopy(_ record: [String: JSONValue]) -> Bool {
        guard let version = record[SystemProperty.version]?.stringValue, !version.isEmpty,
              let updatedAt = record[SystemProperty.updatedAt]?.stringValue else { return false }
        return Timestamp(parsing: updatedAt) != nil
    }

    /// `true` when the server marks `record` deleted.
    static func isDeleted(_ record: [String: JSONValue]) -> Bool {
        record[SystemProperty.deleted]?.boolValue == true
    }

    /// The record's properties without the server-managed ones and the store's ``SyncedMark``: what a client
    /// sends, and what decides whether two copies say the same thing.
    static func content(_ record: [String: JSONValue]) -> [String: JSONValue] {
        // Removing the few server-managed names copies the storage once; filtering would rehash every key.
        var content = record
        for name in SystemProperty.serverManaged { content.removeValue(forKey: name) }
        content.removeValue(forKey: SyncedMark.property)
        return content
    }
}
