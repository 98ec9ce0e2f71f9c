import SyncProtocol
import Testing
@testable import TableSync
@testable import TableSyncStorage

extension ServerRecord {
    /// `record` checked as a copy from the server (without requiring `updatedAt`, which tests' records often lack).
    init(_ record: [String: JSONValue]) throws {
        try self.init(validating: .object(record), requireUpdatedAt: false)
    }
}

/// The one check between the network and the store: each malformed shape a server can send, and the sentence the
/// store refuses it with.
@Suite struct ServerRecordTests {
    /// A value from the server, whether the check requires `updatedAt`, and the reason it is refused with.
    static let malformed: [(value: JSONValue, requireUpdatedAt: Bool, reason: String)] = [
        (.array([]), false, "a record must be a JSON object, found array"),
        ("a", false, "a record must be a JSON object, found string"),
        (.null, false, "a record must be a JSON object, found null"),
        ([:], false, "a record has no \"id\" string"),
        (["id": 7], false, "a record has no \"id\" string"),
        (["id": .null], false, "a record has no \"id\" string"),
        (["id": "../../x"], false, "record id \"../../x\": an id cannot contain the character /"),
        (["id": ".."], false, "record id \"..\": an id cannot be \".\" or \"..\""),
        (["id": ""], false, "record id \"\": an id cannot be empty"),
        (["id": "a\tb"], false, "record id \"a\\tb\": an id cannot contain control characters (found U+9)"),
        (
            ["id": .string(String(repeating: "x", count: 256))], false,
            "record id \"\(String(repeating: "x", count: 256))\": an id has at most 255 characters; this one has 256"
        ),
        (["id": "a", "version": "v\n1"], false, "record a: \"version\" contains control characters"),
        (["id": "a", "version": 3], false, "record a: \"version\" must be a string, found number"),
        (["id": "a", "version": ["v": 1]], false, "record a: \"version\" must be a string, found object"),
        (["id": "a", "deleted": "yes"], false, "record a: \"deleted\" must be a boolean, found string"),
        (["id": "a", "deleted": 0], false, "record a: \"deleted\" must be a boolean, found number"),
        (["id": "a", "updatedAt": "yesterday"], false, "record a: \"updatedAt\" \"yesterday\" is not a date"),
        (["id": "a", "updatedAt": "2024-01-01"], true, "record a: \"updatedAt\" \"2024-01-01\" is not a date"),
        (["id": "a", "updatedAt": 1_700_000_000], false, "record a: \"updatedAt\" must be a string, found number"),
        (["id": "a", "version": "v1"], true, "record a has no \"updatedAt\""),
        (["id": "a", "updatedAt": .null], true, "record a has no \"updatedAt\"")
    ]

    @Test("each malformed shape is refused with its reason", arguments: malformed.indices)
    func refusesMalformedShape(_ row: Int) {
        let (value, requireUpdatedAt, reason) = Self.malformed[row]
        #expect(throws: ServerRecord.Problem(reason: reason)) {
            try ServerRecord(validating: value, requireUpdatedAt: requireUpdatedAt)
        }
    }

    /// A value from the server, whether `updatedAt` is required, and the id, version, `updatedAt` text and
    /// deleted flag it is read as.
    static let valid:
        [(
            value: JSONValue, requireUpdatedAt: Bool, id: String, version: String?, updatedAt: String?,
            deleted: Bool
        )] = [
            (["id": "a"], false, "a", nil, nil, false),
            (["id": "a", "version": .null, "updatedAt": .null, "deleted": .null], false, "a", nil, nil, false),
            (
                [
                    "id": "a", "version": "AAAAAAAAB9E=", "updatedAt": "2024-05-01T10:20:30.1234567+02:00",
                    "deleted": true
                ],
                true,
                "a", "AAAAAAAAB9E=", "2024-05-01T10:20:30.1234567+02:00", true
            ),
            (
                ["id": "é ü", "version": "", "updatedAt": "2024-01-01T00:00:00Z", "deleted": false], true,
                "é ü", "", "2024-01-01T00:00:00Z", false
            )
        ]

    @Test("a valid record keeps every property as sent, and reads its system properties", arguments: valid.indices)
    func readsValidRecord(_ row: Int) throws {
        let expected = Self.valid[row]
        let record = try ServerRecord(validating: expected.value, requireUpdatedAt: expected.requireUpdatedAt)
        #expect(record.id == expected.id)
        #expect(record.version == expected.version)
        #expect(record.updatedAt?.text == expected.updatedAt)
        #expect(record.deleted == expected.deleted)
        #expect(.object(record.properties) == expected.value, "the file holds the record exactly as the server sent it")
    }

    @Test("a 409 or 412 body is the server's copy only with a version and an updatedAt date")
    func serverCopyNeedsVersionAndUpdatedAt() throws {
        let stamp: JSONValue = "2024-01-01T00:00:00Z"
        #expect(try ServerRecord(["id": "a", "version": "v1", "updatedAt": stamp]).isServerCopy)
        #expect(try !ServerRecord(["id": "a", "updatedAt": stamp]).isServerCopy, "no version")
        #expect(try !ServerRecord(["id": "a", "version": "", "updatedAt": stamp]).isServerCopy, "an empty version")
        #expect(try !ServerRecord(["id": "a", "version": "v1"]).isServerCopy, "no updatedAt")
    }

    @Test("a conflict file's server copy is checked like one from the server before a resolution writes it")
    func conflictFileServerCopy() throws {
        func conflict(server: JSONValue) throws -> ConflictRecord {
            let operation: JSONValue = ["id": "a", "op": "update", "seq": 4, "table": "todo", "version": "v1"]
            return try ConflictRecord(
                json: ["operation": operation, "server": server, "reason": "r"],
                file: "conflicts/todo/a.json")
        }
        #expect(try conflict(server: .null).serverRecord(file: "conflicts/todo/a.json") == nil)
        let copy: JSONValue = ["id": "a", "version": "v2", "updatedAt": "2024-01-01T00:00:00Z", "text": "theirs"]
        #expect(try conflict(server: copy).serverRecord(file: "conflicts/todo/a.json")?.properties == copy.objectValue)
        #expect(
            throws: StoreError.invalidSettings(
                file: "conflicts/todo/a.json", field: "server",
                reason: "record id \"..\": an id cannot be \".\" or \"..\"")
        ) {
            try conflict(server: ["id": "..", "version": "v2"]).serverRecord(file: "conflicts/todo/a.json")
        }
    }
}
