import SyncProtocol

/// A record as a repository stores it: the system properties in columns, the rest as a JSON object.
package struct StoredRecord: Sendable, Hashable {
    package var id: String
    /// 100-ns ticks since the Unix epoch.
    package var createdAt: Int64
    /// 100-ns ticks since the Unix epoch; unique within the table and increasing in commit order.
    package var updatedAt: Int64
    package var deleted: Bool
    /// Every property except the system properties.
    package var properties: [String: JSONValue]

    package init(id: String, createdAt: Int64, updatedAt: Int64, deleted: Bool, properties: [String: JSONValue]) {
        self.id = id
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.deleted = deleted
        self.properties = properties
    }

    /// The record's `version`: derived from `updatedAt`, which changes on every write and is unique within
    /// the table, so the version needs no column of its own.
    package var version: String { RecordVersion.make(updatedAt: updatedAt) }

    /// The record as the protocol sends it: its properties plus `id`, `createdAt`, `updatedAt`, `version` and
    /// `deleted`. With `select`, only the named properties, system properties among them (a `$select` as
    /// ``ListQuery/parseSelect(_:version:table:)`` reads it); one the record lacks is left out.
    package func json(select: [String]? = nil) -> JSONValue {
        guard let select else {
            var members = properties
            addSystemProperties(to: &members)
            return .object(members)
        }
        let system = systemProperties
        var members: [String: JSONValue] = [:]
        for name in select { if let value = system[name] ?? properties[name] { members[name] = value } }
        return .object(members)
    }

    /// `id`, `createdAt`, `updatedAt`, `version` and `deleted` as the protocol sends them.
    package var systemProperties: [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        addSystemProperties(to: &members)
        return members
    }

    /// Sets the system properties in `members`, over any of the same name.
    private func addSystemProperties(to members: inout [String: JSONValue]) {
        members.reserveCapacity(members.count + 5)
        members[SystemProperty.id] = .string(id)
        members[SystemProperty.createdAt] = .string(Timestamp(ticks: createdAt).text)
        members[SystemProperty.updatedAt] = .string(Timestamp(ticks: updatedAt).text)
        members[SystemProperty.version] = .string(version)
        members[SystemProperty.deleted] = .bool(deleted)
    }
}

/// The `version` token of a record.
package enum RecordVersion {
    /// Base64 of `updatedAt` as 8 big-endian bytes: opaque to clients, as the protocol asks.
    package static func make(updatedAt: Int64) -> String {
        // The 8 bytes and a zero byte, as three 24-bit groups of four base64 digits each; the last digit is padding.
        let value = UInt64(bitPattern: updatedAt)
        let groups = [
            UInt32(value >> 40), UInt32(truncatingIfNeeded: value >> 16) & 0xFF_FFFF,
            UInt32(truncatingIfNeeded: value << 8) & 0xFF_FFFF
        ]
        var output: [UInt8] = []
        output.reserveCapacity(12)
        for group in groups {
            for shift: UInt32 in [18, 12, 6, 0] { output.append(alphabet[Int(group >> shift & 0x3F)]) }
        }
        output[11] = UInt8(ascii: "=")
        return String(decoding: output, as: UTF8.self)
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
}
