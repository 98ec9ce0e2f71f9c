import Foundation
import Testing
import TestSupport
@testable import SyncProtocol

@Suite struct CanonicalJSONTests {
    @Test func prettyAndCompactLayout() throws {
        let value = try JSONParser.parse(#"{"b":[1,2,{}],"a":"x","c":{"z":null,"y":[]}}"#)
        let expected = """
            {
              "a": "x",
              "b": [
                1,
                2,
                {}
              ],
              "c": {
                "y": [],
                "z": null
              }
            }

            """
        #expect(CanonicalJSON.string(value) == expected)
        #expect(CanonicalJSON.string(value, style: .compact) == #"{"a":"x","b":[1,2,{}],"c":{"y":[],"z":null}}"#)
    }

    @Test func keysSortByUTF8BytesNotByLocale() {
        let value: JSONValue = ["b": 1, "B": 2, "é": 3, "e": 4, "_": 5, "10": 6, "9": 7, "😀": 8, "ｚ": 9]
        #expect(
            CanonicalJSON.string(value, style: .compact) == #"{"10":6,"9":7,"B":2,"_":5,"b":1,"e":4,"é":3,"ｚ":9,"😀":8}"#
        )
    }

    @Test("key order: by bytes, a prefix first, no key before itself, short and long keys alike")
    func keyOrder() {
        #expect(CanonicalJSON.keyPrecedes("", "a"))
        #expect(CanonicalJSON.keyPrecedes("a", "ab") && !CanonicalJSON.keyPrecedes("ab", "a"))
        #expect(!CanonicalJSON.keyPrecedes("a", "a"))
        #expect(CanonicalJSON.keyPrecedes("z", "é") && !CanonicalJSON.keyPrecedes("é", "z"))
        let long = "a property name longer than fifteen bytes"
        #expect(CanonicalJSON.keyPrecedes(long + "1", long + "2") && !CanonicalJSON.keyPrecedes(long, long))
        #expect(CanonicalJSON.keyPrecedes(long, long + " "))
    }

    @Test("members in canonical order: by their first eight bytes, then whole when those are shared")
    func canonicalOrderMatchesKeyOrder() {
        // Keys that differ within eight bytes, keys that share them (long names, a NUL, a shorter key that is their
        // prefix), multi-byte characters across the eighth byte, and the empty key.
        let fixed = [
            "", "a", "ab", "abcdefgh", "abcdefgh\u{0}", "abcdefghi", "abcdefgg", "abcdefg\u{0}", "abcdefgé", "abcdefg",
            "updatedAt", "updatedAs", "version", "@synced", "id", "é", "😀", "\u{0}", "\u{0}\u{0}"
        ]
        var generator = SeededGenerator(seed: 7)
        let alphabet: [Character] = ["a", "b", "\u{0}", "é", "z", "😀"]
        for round in 0..<200 {
            var keys = Set(fixed.shuffled(using: &generator).prefix(round % fixed.count))
            for _ in 0..<Int.random(in: 0..<12, using: &generator) {
                let length = Int.random(in: 0..<12, using: &generator)
                keys.insert(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
            }
            let members = Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.null) })
            let ordered = CanonicalJSON.canonicalOrder(of: members).map { members[$0].key }
            #expect(ordered == keys.sorted(by: CanonicalJSON.keyPrecedes), "keys \(keys.sorted())")
        }
    }

    @Test("an object encoded with one member added: the same bytes as the object holding it")
    func encodingWithAMemberAdded() {
        let record: [String: JSONValue] = ["id": "a", "title": "x", "nested": ["b": 1, "a": [true, nil]], "@x": 1]
        for key in ["", "!", "@synced", "id", "m", "zz", "😀", "title"] {
            var holding = record
            holding[key] = "added"
            #expect(CanonicalJSON.encode(record, adding: (key, "added")) == CanonicalJSON.encode(.object(holding)))
        }
        #expect(CanonicalJSON.encode([:], adding: ("k", nil)) == CanonicalJSON.encode(["k": nil]))
    }

    @Test(arguments: [
        (JSONValue.double(1.0), "1"), (.double(-0.0), "0"), (.double(0.1), "0.1"), (.double(1e-7), "1e-07"),
        (.double(1.5e300), "1.5e+300"), (.double(9007199254740993.0), "9007199254740992"),
        (.double(1e16), "10000000000000000"), (.double(1e19), "1e+19"), (.integer(-42), "-42"), (.double(2.5), "2.5"),
        (.double(.nan), "null")
    ])
    func numbersHaveOneSpelling(_ value: JSONValue, _ spelling: String) {
        #expect(CanonicalJSON.string(value, style: .compact) == spelling)
    }

    @Test func stringsHaveOneSpelling() throws {
        let parsed = try JSONParser.parse(#""\u0041\/\b\f\n\r\t\u0001\u007f\u2028é\"\\""#)
        #expect(CanonicalJSON.string(parsed, style: .compact) == "\"A/\\b\\f\\n\\r\\t\\u0001\u{7F}\u{2028}é\\\"\\\\\"")
    }

    @Test func writingIsByteStableAndIndependentOfInputOrder() throws {
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<300 {
            let value = Self.randomValue(depth: 0, using: &generator)
            let first = CanonicalJSON.encode(value)
            let reparsed = try JSONParser.parse(first)
            #expect(reparsed == value)
            let second = CanonicalJSON.encode(reparsed)
            #expect(first == second)
            let compact = CanonicalJSON.encode(value, style: .compact)
            #expect(CanonicalJSON.encode(try JSONParser.parse(compact), style: .compact) == compact)
        }
        let forward = try JSONParser.parse(#"{"a": 1, "b": {"x": [1, 2], "y": "z"}, "c": null}"#)
        let backward = try JSONParser.parse(#"{"c": null, "b": {"y": "z", "x": [1, 2]}, "a": 1}"#)
        #expect(CanonicalJSON.encode(forward) == CanonicalJSON.encode(backward))
    }

    @Test("parsing notes canonical bytes: never wrongly, and always when no string holds an escape")
    func parsingNotesTheCanonicalLayout() throws {
        var generator = SeededGenerator(seed: 11)
        let backslash = UInt8(ascii: "\\")
        for _ in 0..<300 {
            let value = Self.randomValue(depth: 0, using: &generator)
            let canonical = CanonicalJSON.encode(value)
            let parsed = try JSONParser.parseNotingLayout(canonical)
            #expect(parsed.value == value)
            #expect(parsed.canonical == !canonical.contains(backslash), "\(CanonicalJSON.string(value))")
            // The same value in other layouts: never taken for canonical.
            let text = String(decoding: canonical, as: UTF8.self)
            let others = [
                CanonicalJSON.string(value, style: .compact), String(text.dropLast()), text + "\n", " " + text,
                text.replacingOccurrences(of: "\n  ", with: "\n    "), text.replacingOccurrences(of: ": ", with: " : "),
                text.replacingOccurrences(of: ",\n", with: " ,\n"), text.replacingOccurrences(of: "\n", with: "\r\n")
            ]
            for other in Set(others) where other != text {
                let reparsed = try JSONParser.parseNotingLayout(Array(other.utf8))
                #expect(reparsed.value == value)
                #expect(!reparsed.canonical, "\(other)")
            }
        }
        let spelledOtherwise = [
            "{\n  \"b\": 1,\n  \"a\": 2\n}\n", "{\n  \"a\": 1.0\n}\n", "{\n  \"a\": -0\n}\n", "{\n  \"a\": 1e2\n}\n",
            "{\n  \"a\": \"\\u0041\"\n}\n", "{\n  \"a\": \"\\/\"\n}\n", "{\n\t\"a\": 1\n}\n", "{ }\n", "[\n]\n",
            "{\n  \"a\": [ ]\n}\n", "{\n  \"a\": 100000000000000000000\n}\n"
        ]
        for text in spelledOtherwise {
            #expect(!(try JSONParser.parseNotingLayout(Array(text.utf8)).canonical), "\(text)")
        }
        let spelledCanonically = "{\n  \"a\": [\n    1.5,\n    {}\n  ],\n  \"b\": -3,\n  \"é\": \"x/y\"\n}\n"
        #expect(try JSONParser.parseNotingLayout(Array(spelledCanonically.utf8)).canonical)
    }

    static func randomValue(depth: Int, using generator: inout SeededGenerator) -> JSONValue {
        let choice = Int.random(in: 0..<(depth > 3 ? 6 : 8), using: &generator)
        switch choice {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .integer(Int64.random(in: Int64.min...Int64.max, using: &generator))
        case 3:
            return .double(
                Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator)).isFinite
                    ? Double.random(in: -1e20...1e20, using: &generator) : 0.5)
        case 4, 5: return .string(randomString(using: &generator))
        case 6:
            return .array(
                (0..<Int.random(in: 0..<5, using: &generator)).map { _ in
                    randomValue(depth: depth + 1, using: &generator)
                })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0..<6, using: &generator) {
                members[randomString(using: &generator)] = randomValue(depth: depth + 1, using: &generator)
            }
            return .object(members)
        }
    }

    static func randomString(using generator: inout SeededGenerator) -> String {
        let pieces: [String] = ["a", "Z", "é", "e\u{301}", "\"", "\\", "\n", "\u{1}", "😀", " ", "/", "\u{2028}", "中"]
        return (0..<Int.random(in: 0..<8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
            .joined()
    }
}
