import Testing
@testable import TableSync
@testable import TableSyncStorage

/// Reading the lines of `journal.jsonl` alone (``Journal/ParsedFile``): what stays pending once settled lines and
/// acknowledged operations are taken out, and what the lines left out still tell.
@Suite struct JournalFileTests {
    static let first = PendingOperation(sequence: 1, kind: .insert, table: "t", id: "a")
    static let second = PendingOperation(
        sequence: 2, kind: .update, table: "t", id: "b", baseVersion: "v1", origin: "clone", operationID: "op-b")
    static let third = PendingOperation(sequence: 3, kind: .delete, table: "t", id: "c", baseVersion: "v2")

    static func bytes(_ lines: [String]) -> [UInt8] { Array(lines.joined(separator: "\n").utf8) }
    static func line(_ operation: PendingOperation) -> String {
        String(decoding: Journal.line(operation).dropLast(), as: UTF8.self)
    }

    struct Case: CustomTestStringConvertible {
        var name: String
        var lines: [String]
        var settled: [String]?
        var acknowledged: Set<String> = []
        var pending: [PendingOperation]
        var highestSequence: Int64
        var droppedAcknowledged = false
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "every line pending; blank lines skipped",
            lines: [line(first), "", "  \t", line(second), line(third), ""], pending: [first, second, third],
            highestSequence: 3),
        Case(
            name: "a settled line leaves out its operation, whose sequence number still counts",
            lines: [line(first), line(second), line(third)], settled: [line(third)], pending: [first, second],
            highestSequence: 3),
        Case(
            name: "each settled line leaves out one identical line: a line git doubled stays once",
            lines: [line(first), line(first), line(second)], settled: [line(first)], pending: [first, second],
            highestSequence: 2),
        Case(
            name: "a settled line unlike any journal line (torn) leaves out nothing",
            lines: [line(first)], settled: [String(line(first).dropLast(3))], pending: [first], highestSequence: 1),
        Case(
            name: "an acknowledged operation is left out, and says the file must be rewritten",
            lines: [line(first), line(second), line(third)], acknowledged: ["op-b"], pending: [first, third],
            highestSequence: 3, droppedAcknowledged: true),
        Case(
            name: "a line written otherwise is read canonical",
            lines: [#"{ "table": "t", "op": "insert", "id": "a", "seq": 1 }"#], pending: [first], highestSequence: 1)
    ]

    @Test("journal lines: pending, settled, acknowledged", arguments: cases)
    func parse(_ example: Case) throws {
        let settled = example.settled.map { SettledLines(Self.bytes($0) + Array("\n".utf8)) }
        let parsed = try Journal.ParsedFile(
            Self.bytes(example.lines), settled: settled, acknowledged: example.acknowledged)
        #expect(parsed.operations == example.pending)
        #expect(parsed.lines == example.pending.map(Journal.line))
        #expect(parsed.highestSequence == example.highestSequence)
        #expect(parsed.droppedAcknowledged == example.droppedAcknowledged)
    }

    @Test("a line that is not an operation is named by its number, blank lines counted")
    func invalidLine() throws {
        let bytes = Self.bytes([Self.line(Self.first), "", #"{"seq": 2, "op": "insert""#])
        #expect {
            try Journal.ParsedFile(bytes, settled: nil, acknowledged: [])
        } throws: { error in
            guard case StoreError.invalidJournalLine(let file, let line, _) = error else { return false }
            return file == StoreLayout.journalFileName && line == 3
        }
    }
}
