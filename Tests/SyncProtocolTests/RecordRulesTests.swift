import Testing
import TestSupport
@testable import SyncProtocol

@Suite struct RecordRulesTests {
    @Test(arguments: ["a", "A-1_b.c", "é", "😀", String(repeating: "x", count: 255), "..a", "a b", "con"])
    func validIDs(_ id: String) {
        #expect(RecordID.problem(with: id) == nil)
    }

    @Test(arguments: [
        "", ".", "..", "a/b", "a\\b", "a\"b", "a+b", "a?b", "a`b", "a\u{0}b", "a\nb", "\u{7F}", "a\u{1F}", "\u{85}x",
        String(repeating: "x", count: 256)
    ])
    func invalidIDs(_ id: String) {
        #expect(RecordID.problem(with: id) != nil)
    }

    @Test("control characters are found in ASCII and beyond, and only they")
    func controlCharacters() {
        for text in ["a\u{0}", "\u{1F}x", "AQ\u{7F}", "é\u{85}", "\u{9F}", "😀\n"] {
            #expect(text.containsControlCharacter, "\(text.debugDescription)")
        }
        for text in ["", "AAAAAAAAB9E=", "a b~", "é", "\u{A0}", "😀", "\u{200B}"] {
            #expect(!text.containsControlCharacter, "\(text.debugDescription)")
        }
    }

    @Test func systemPropertiesAreRecognisedIgnoringASCIICaseOnly() {
        for name in ["id", "ID", "Id", "version", "VERSION", "createdAt", "createdat", "UPDATEDAT", "Deleted"] {
            #expect(SystemProperty.isSystemProperty(name), "\(name)")
        }
        for name in ["i", "idd", "versions", "text", "ıd", "İD", "créatedAt", ""] {
            #expect(!SystemProperty.isSystemProperty(name), "\(name)")
        }
        #expect("Content-Encoding".caseInsensitiveEquals("content-encoding"))
        #expect(!"Ä".caseInsensitiveEquals("ä"), "ASCII letters only")
        #expect(!"a[".caseInsensitiveEquals("A{"), "only letters fold")
    }

    @Test(arguments: ["todo", "Todo_Item", "t-1", "a9", String(repeating: "t", count: 64)])
    func validTableNames(_ name: String) { #expect(TableName.isValid(name)) }

    @Test(arguments: ["", "_x", "9lives", "a b", "a/b", "..", "é", String(repeating: "t", count: 65)])
    func invalidTableNames(_ name: String) { #expect(!TableName.isValid(name)) }
}

@Suite struct TimestampTests {
    @Test(arguments: [
        ("2024-05-01T10:20:30Z", "2024-05-01T10:20:30.000Z"),
        ("2024-05-01T10:20:30.1Z", "2024-05-01T10:20:30.100Z"),
        ("2024-05-01T10:20:30.123Z", "2024-05-01T10:20:30.123Z"),
        ("2024-05-01T10:20:30.1234567Z", "2024-05-01T10:20:30.1234567Z"),
        ("2024-05-01T12:20:30.5+02:00", "2024-05-01T10:20:30.500Z"),
        ("2024-05-01T05:50:30-04:30", "2024-05-01T10:20:30.000Z"),
        ("2024-02-29T00:00:00.000+0000", "2024-02-29T00:00:00.000Z"),
        ("1969-12-31T23:59:59.9990000Z", "1969-12-31T23:59:59.999Z"),
        ("2024-05-01T10:20Z", "2024-05-01T10:20:00.000Z")
    ])
    func parsesAndKeepsText(_ text: String, _ canonical: String) throws {
        let timestamp = try #require(Timestamp(parsing: text))
        #expect(timestamp.text == text)
        #expect(timestamp.canonical.text == canonical)
        #expect(Timestamp(parsing: canonical) == timestamp)
    }

    @Test(arguments: [
        "2024-05-01", "2024-05-01T10:20:30", "2024-05-01T10:20:30.12345678Z", "2024-13-01T00:00:00Z",
        "2023-02-29T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T10:20:30.Z", "x", "2024-05-01T10:20:30Zjunk"
    ])
    func refusesMalformed(_ text: String) {
        #expect(Timestamp(parsing: text) == nil)
    }

    @Test func ordersByInstantAndRoundTripsTicks() {
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<2_000 {
            let ticks = Int64.random(in: -30_000_000_000_000_000...80_000_000_000_000_000, using: &generator)
            let timestamp = Timestamp(ticks: ticks)
            #expect(Timestamp(parsing: timestamp.text)?.ticks == ticks)
        }
        #expect(Timestamp(parsing: "2024-05-01T10:20:30.1Z")! < Timestamp(parsing: "2024-05-01T12:20:30.2+02:00")!)
        let components = Timestamp(parsing: "2024-02-29T13:14:15.5Z")!.components
        #expect(components.year == 2024 && components.month == 2 && components.day == 29)
        #expect(components.hour == 13 && components.minute == 14 && components.second == 15)
    }

    @Test func propertyNamesArePlainIdentifiersOfAtMost128Characters() throws {
        for name in ["a", "_a1", "updatedAt", String(repeating: "p", count: 128)] {
            #expect(PropertyName.isPlain(name), "\(name)")
        }
        for name in ["", "1a", "a-b", "a b", "é", "a'b", String(repeating: "p", count: 129)] {
            #expect(!PropertyName.isPlain(name), "\(name)")
        }
        #expect(throws: OrderByParseError.self) { try OrderByKey.parseList(String(repeating: "p", count: 129)) }
        #expect(
            try OrderByKey.parseList("_a desc, b") == [
                OrderByKey(property: "_a", descending: true), OrderByKey(property: "b")
            ])
    }

    @Test("a record nests at most as deep as every envelope of the protocol can still carry")
    func recordNesting() throws {
        func nested(_ levels: Int) -> JSONValue {
            var value: JSONValue = "leaf"
            for _ in 0..<levels { value = ["a": value] }
            return value
        }
        #expect(RecordNesting.depth(of: "x") == 0)
        #expect(RecordNesting.depth(of: ["id": "a", "tags": ["x", ["y"]]]) == 3)
        #expect(RecordNesting.problem(with: try #require(nested(RecordNesting.maximumDepth).objectValue)) == nil)
        let tooDeep = try #require(nested(RecordNesting.maximumDepth + 1).objectValue)
        #expect(RecordNesting.problem(with: tooDeep)?.contains("\(RecordNesting.maximumDepth + 1) levels") == true)
        // The deepest record allowed still parses inside a batch's envelope.
        let envelope: JSONValue = ["operations": [["op": "insert", "item": nested(RecordNesting.maximumDepth)]]]
        #expect(throws: Never.self) { try JSONParser.parse(CanonicalJSON.encode(envelope, style: .compact)) }
    }
}
