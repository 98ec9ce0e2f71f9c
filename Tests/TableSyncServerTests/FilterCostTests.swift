import SyncProtocol
@testable import TableSyncServer
import Testing

/// `$filter`'s cost, measured before any database sees it: nesting depth, terms, and how much longer its string
/// functions can make a string (``FilterCost``).
@Suite("Filter cost")
struct FilterCostTests {
    static let limits = FilterLimits(maxDepth: 8, maxTerms: 20, maxGrowth: 16)

    /// A filter and what its refusal says, or `nil` when it is accepted.
    static let cases: [(String, String?)] = [
        ("text eq 'milk'", nil),
        (
            """
            (updatedAt gt datetimeoffset'2024-05-01T10:20:30.123Z') or (updatedAt eq \
            datetimeoffset'2024-05-01T10:20:30.123Z' and id gt 'a')
            """,
            nil
        ),
        ("replace(text, ' ', '%20') eq 'a'", nil),
        ("replace(replace(replace(replace(text, 'a', 'bb'), 'b', 'cc'), 'c', 'dd'), 'd', 'ee') eq 'x'", nil),
        (
            """
            replace(replace(replace(replace(replace(text, 'a', 'bb'), 'b', 'cc'), 'c', 'dd'), 'd', 'ee'), 'e', 'ff') \
            eq 'x'
            """,
            "32 times as long"
        ),
        ("replace(text, 'a', 'abcdefghijklmnopq') eq 'x'", "17 times as long"),
        ("length(replace(replace(text, 'a', 'aaaaa'), 'a', 'aaaaa')) gt 1", "25 times as long"),
        (
            """
            concat(concat(concat(text, text), concat(text, text)), concat(concat(text, text), concat(text, text))) eq \
            'x'
            """,
            nil
        ),
        ("replace(concat(text, text), 'a', 'aaaaaaaaa') eq 'x'", "18 times as long"),
        ("replace(text, 'a', text) eq 'x'", "replacement as a literal"),
        ("replace(text, 'a', concat('b', 'c')) eq 'x'", "replacement as a literal"),
        ("tolower(toupper(trim(substring(text, 1)))) eq 'x'", nil),
        ("not (not (not (not (not (not (not (not (done eq true))))))))", "nested 10 levels deep"),
        (
            """
            id in ('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', \
            'm', 'n', 'o', 'p', 'q', 'r', 's', 't')
            """,
            "22 terms"
        )
    ]

    @Test("depth, terms and growth are measured before the filter runs", arguments: cases)
    func measured(text: String, refusal: String?) throws {
        let filter = try FilterParser.parse(text)
        do {
            try FilterCost.check(filter, textLength: text.unicodeScalars.count, limits: Self.limits)
            #expect(refusal == nil, "accepted: \(text)")
        } catch {
            let expected = try #require(refusal, "refused: \(text): \(error.message)")
            #expect(error.status == .badRequest)
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    @Test("a literal counts by its length against the filter's, so only replace() multiplies it")
    func literalGrowth() throws {
        let text = "concat('abc', 'def') eq 'x'"
        let measure = try FilterCost.measure(
            try FilterParser.parse(text), textLength: text.unicodeScalars.count, limits: Self.limits)
        #expect(measure.depth == 3 && measure.terms == 5)
        #expect(measure.growth == 0)
        let concat = try FilterCost.measure(
            .function(.concat, [.literal(.string("abc")), .property("text")]), textLength: 30, limits: Self.limits)
        #expect(abs(concat.growth - 1.1) < 1e-9)
    }
}
