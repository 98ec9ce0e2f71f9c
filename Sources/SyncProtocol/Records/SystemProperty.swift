/// The properties that belong to the server, not to the record's author.
public enum SystemProperty {
    /// The record's id: a string of 1–255 characters (see ``RecordID``).
    public static let id = "id"
    /// When the server first stored the record.
    public static let createdAt = "createdAt"
    /// When the server last changed the record; incremental pull pages by it.
    public static let updatedAt = "updatedAt"
    /// An opaque token that changes on every write; sent back as `If-Match` for optimistic concurrency.
    public static let version = "version"
    /// `true` once the record is soft-deleted.
    public static let deleted = "deleted"

    /// Every system property name.
    public static let all: Set<String> = [id, createdAt, updatedAt, version, deleted]

    /// The system properties except `id`: what a client strips before sending an insert.
    public static let serverManaged: Set<String> = [createdAt, updatedAt, version, deleted]

    /// `true` when `name` is a system property, compared as the protocol does (ignoring case).
    public static func isSystemProperty(_ name: String) -> Bool {
        all.contains(name) || all.contains { $0.caseInsensitiveEquals(name) }
    }
}

extension String {
    /// ASCII case-insensitive equality, for protocol names (headers, query options, property names).
    public func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return zip(utf8, other.utf8).allSatisfy { $0 == $1 || (Self.asciiLowercase($0) == Self.asciiLowercase($1)) }
    }

    private static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
