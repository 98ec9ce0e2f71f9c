import SyncProtocol

/// A record the server sent, checked once where its page or answer is read: the one gate between the network and
/// the file system. Past it the engine trusts the type: an id that is safe as a file name, the server's version,
/// and the properties as the server wrote them.
///
/// A record must be a JSON object with an `id` that follows ``RecordID`` (so `../../x`, `..` or ids with `/` or
/// control characters never become paths), a `version` string without control characters (it goes into
/// `If-Match` headers and the index), and, where required, an `updatedAt` that parses as a ``Timestamp``.
/// `deleted`, when present, must be a boolean.
package struct ServerRecord: Sendable, Equatable {
    /// Why a value from the server is no record the store can hold.
    package struct Problem: Error, Equatable, CustomStringConvertible {
        package var reason: String
        package var description: String { reason }
    }

    /// The record's id: valid under ``RecordID``, so it maps to a record file name.
    package let id: String
    /// The server's `version` (`nil` when it sent none, or `null`).
    package let version: String?
    /// The server's `updatedAt`, with its exact text (`nil` when it sent none, or `null`).
    let updatedAt: Timestamp?
    /// `true` when the server marks the record deleted.
    package let deleted: Bool
    /// Every property as the server sent it, system properties included: what the record file holds.
    package let properties: [String: JSONValue]

    /// Checks `value`; `requireUpdatedAt` for pulled records, whose `updatedAt` drives the watermark.
    package init(validating value: JSONValue, requireUpdatedAt: Bool) throws(Problem) {
        guard case .object(let record) = value else {
            throw Problem(reason: "a record must be a JSON object, found \(value.typeName)")
        }
        guard let id = record[SystemProperty.id]?.stringValue else {
            throw Problem(reason: "a record has no \"id\" string")
        }
        if let problem = RecordID.problem(with: id) {
            throw Problem(reason: "record id \(id.debugDescription): \(problem)")
        }
        switch record[SystemProperty.version] {
        case nil, .null?:
            version = nil
        case .string(let text)?:
            if text.containsControlCharacter {
                throw Problem(reason: "record \(id): \"version\" contains control characters")
            }
            version = text
        case let other?:
            throw Problem(reason: "record \(id): \"version\" must be a string, found \(other.typeName)")
        }
        switch record[SystemProperty.deleted] {
        case nil, .null?, .bool?: break
        case let other?: throw Problem(reason: "record \(id): \"deleted\" must be a boolean, found \(other.typeName)")
        }
        switch record[SystemProperty.updatedAt] {
        case .string(let text)?:
            guard let instant = Timestamp(parsing: text) else {
                throw Problem(reason: "record \(id): \"updatedAt\" \(text.debugDescription) is not a date")
            }
            updatedAt = instant
        case nil, .null?:
            if requireUpdatedAt { throw Problem(reason: "record \(id) has no \"updatedAt\"") }
            updatedAt = nil
        case let other?:
            throw Problem(reason: "record \(id): \"updatedAt\" must be a string, found \(other.typeName)")
        }
        self.id = id
        deleted = Self.isDeleted(record)
        properties = record
    }

    /// `true` when the record carries what only the server writes (``isServerCopy(_:)``).
    package var isServerCopy: Bool { Self.isServerCopy(properties) }

    /// The record's properties without the server-managed ones (``content(_:)``).
    package var content: [String: JSONValue] { Self.content(properties) }

    /// `true` when `record` carries what only the server writes: a `version` and an `updatedAt` date. A 409 or
    /// 412 body is the server's copy only then; azure-mobile-apps-node answers a duplicate insert with the item
    /// it was sent, which, taken for the server's copy, would count the insert as applied and lose it.
    package static func isServerCopy(_ record: [String: JSONValue]) -> Bool {
        guard let version = record[SystemProperty.version]?.stringValue, !version.isEmpty,
            let updatedAt = record[SystemProperty.updatedAt]?.stringValue
        else { return false }
        return Timestamp(parsing: updatedAt) != nil
    }

    /// `true` when `record` is marked deleted.
    static func isDeleted(_ record: [String: JSONValue]) -> Bool {
        record[SystemProperty.deleted]?.boolValue == true
    }

    /// The record's properties without the server-managed ones and the store's ``SyncedMark``: what a client
    /// sends, and what decides whether two copies say the same thing.
    package static func content(_ record: [String: JSONValue]) -> [String: JSONValue] {
        // Removing the few server-managed names copies the storage once; filtering would rehash every key.
        var content = record
        for name in SystemProperty.serverManaged { content.removeValue(forKey: name) }
        content.removeValue(forKey: SyncedMark.property)
        return content
    }
}
