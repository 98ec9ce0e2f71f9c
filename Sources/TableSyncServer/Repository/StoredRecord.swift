import SyncProtocol

/// A record as a repository stores it: the system properties in columns, the rest as a JSON object.
public struct StoredRecord: Sendable, Hashable {
    public var id: String
    /// 100-ns ticks since the Unix epoch.
    public var createdAt: Int64
    /// 100-ns ticks since the Unix epoch; unique within the table and increasing in commit order.
    public var updatedAt: Int64
    public var deleted: Bool
    /// Every property except the system properties.
    public var properties: [String: JSONValue]

    public init(id: String, createdAt: Int64, updatedAt: Int64, deleted: Bool, properties: [String: JSONValue]) {
        self.id = id
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.deleted = deleted
        self.properties = properties
    }

    /// The record's `version`: derived from `updatedAt`, which changes on every write and is unique within
    /// the table, so the version needs no column of its own.
    public var version: String { RecordVersion.make(updatedAt: updatedAt) }

    /// The record as the protocol sends it: its properties plus `id`, `createdAt`, `updatedAt`, `version` and
    /// `deleted`. With `select`, only the named properties besides the system properties.
    public func json(select: [String]? = nil) -> JSONValue {
        var members: [String: JSONValue]
        if let select {
            members = [:]
            for name in select { if let value = properties[name] { members[name] = value } }
        } else {
            members = properties
        }
        members.merge(systemProperties) { _, system in system }
        return .object(members)
    }

    /// `id`, `createdAt`, `updatedAt`, `version` and `deleted` as the protocol sends them.
    public var systemProperties: [String: JSONValue] {
        [
            SystemProperty.id: .string(id),
            SystemProperty.createdAt: .string(Timestamp(ticks: createdAt).text),
            SystemProperty.updatedAt: .string(Timestamp(ticks: updatedAt).text),
            SystemProperty.version: .string(version),
            SystemProperty.deleted: .bool(deleted),
        ]
    }
}

/// The `version` token of a record.
public enum RecordVersion {
    /// Base64 of `updatedAt` as 8 big-endian bytes: opaque to clients, as the protocol asks.
    public static func make(updatedAt: Int64) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: updatedAt) >> (56 - 8 * $0)) } + [0]
        var output: [UInt8] = []
        for chunk in stride(from: 0, to: 9, by: 3) {
            let value = UInt32(bytes[chunk]) << 16 | UInt32(bytes[chunk + 1]) << 8 | UInt32(bytes[chunk + 2])
            for shift in [18, 12, 6, 0] { output.append(alphabet[Int(value >> UInt32(shift) & 0x3F)]) }
        }
        output[11] = UInt8(ascii: "=")
        return String(decoding: output, as: UTF8.self)
    }
}
