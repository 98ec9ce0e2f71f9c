import Testing
import TestSupport
@testable import SyncProtocol

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(
            #" {"a": [1, -2.5, 3e2, true, false, null, "x\n\u00e9\ud83d\ude00"], "b": {}} "#)
        #expect(value == ["a": [1, -2.5, 300.0, true, false, nil, "x\né😀"], "b": [:]])
        #expect(try JSONParser.parse("9223372036854775807") == .integer(Int64.max))
        #expect(try JSONParser.parse("9223372036854775808") == .double(9_223_372_036_854_775_808.0))
    }

    struct BadInput: Sendable, CustomTestStringConvertible {
        let text: String
        let line: Int
        let column: Int
        let reasonContains: String
        var testDescription: String { text.debugDescription }
    }

    static let badInputs: [BadInput] = [
        BadInput(text: "", line: 1, column: 1, reasonContains: "empty"),
        BadInput(text: "{\n  \"a\": 1,\n  \"b\" 2\n}", line: 3, column: 7, reasonContains: "expected ':'"),
        BadInput(text: "{\"a\": 1,}", line: 1, column: 9, reasonContains: "member name"),
        BadInput(text: "[1 2]", line: 1, column: 4, reasonContains: "expected ',' or ']'"),
        BadInput(text: "{\"a\": 1, \"a\": 2}", line: 1, column: 10, reasonContains: "duplicate member name \"a\""),
        BadInput(text: "\u{FEFF}{}", line: 1, column: 1, reasonContains: "byte order mark"),
        BadInput(text: "{\n<<<<<<< HEAD\n\"a\": 1\n}", line: 2, column: 1, reasonContains: "merge conflict"),
        BadInput(text: "<<<<<<< ours\n{}", line: 1, column: 1, reasonContains: "merge conflict"),
        BadInput(text: "\"abc", line: 1, column: 1, reasonContains: "never closed"),
        BadInput(text: "\"a\tb\"", line: 1, column: 3, reasonContains: "control character"),
        BadInput(text: "01", line: 1, column: 1, reasonContains: "leading zeros"),
        BadInput(text: "1.", line: 1, column: 1, reasonContains: "decimal point"),
        BadInput(text: "{} x", line: 1, column: 4, reasonContains: "after the end"),
        BadInput(text: "tru", line: 1, column: 1, reasonContains: "expected a JSON value"),
        BadInput(text: "\"\\ud800\"", line: 1, column: 2, reasonContains: "surrogate"),
        BadInput(text: "\"\\q\"", line: 1, column: 2, reasonContains: "invalid escape"),
        BadInput(text: "1e999", line: 1, column: 1, reasonContains: "out of range"),
        BadInput(text: "{\r\n\"é\": x}", line: 2, column: 6, reasonContains: "unexpected 'x'")
    ]

    @Test(arguments: badInputs)
    func reportsLineAndColumn(_ input: BadInput) {
        do {
            _ = try JSONParser.parse(input.text)
            Issue.record("parsed \(input.text.debugDescription) without error")
        } catch let error as JSONParseError {
            #expect(error.line == input.line)
            #expect(error.column == input.column)
            #expect(error.reason.contains(input.reasonContains), "\(error.reason)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func refusesInvalidUTF8WithItsPosition() {
        let bytes: [UInt8] = Array("{\"a\": \"ok".utf8) + [0xC3, 0x28] + Array("\"}".utf8)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(bytes) }
        do {
            _ = try JSONParser.parse(bytes)
        } catch let error as JSONParseError {
            #expect(error.offset == 9)
            #expect(error.reason.contains("UTF-8"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func limitsNesting() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect((try? JSONParser.parse(fine)) != nil)
    }

    @Test func randomBytesNeverCrash() {
        var generator = SeededGenerator(seed: 7)
        let alphabet = Array("{}[]\",:0123456789-+.eEtrufalsn \\u\n\t\"ab".utf8)
        for _ in 0..<5_000 {
            let length = Int.random(in: 0..<40, using: &generator)
            let bytes = (0..<length).map { _ in
                Bool.random(using: &generator)
                    ? alphabet.randomElement(using: &generator)! : UInt8.random(in: 0...255, using: &generator)
            }
            _ = try? JSONParser.parse(bytes)
        }
    }
}
