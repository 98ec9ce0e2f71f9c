import Testing
import TestSupport
@testable import SyncProtocol

@Suite struct FilterPrinterTests {
    /// Trees and the exact text they print as: minimal parentheses, canonical spelling.
    static let printed: [(FilterExpression, String)] = [
        (.null, "null"),
        (.bool(true), "true"),
        (.int(-42), "-42"),
        (.int(.min), "-9223372036854775808"),
        (.dbl(1), "1.0"),
        (.dbl(-0.5), "-0.5"),
        (.dbl(1e20), "1e+20"),
        (.dbl(0.1), "0.1"),
        (.str("it's"), "'it''s'"),
        (.str(""), "''"),
        (.date("2024-01-02T03:04:05.1230000+00:00"), "datetimeoffset'2024-01-02T03:04:05.1230000+00:00'"),
        (.date("2024-01-02T03:04:05Z"), "datetimeoffset'2024-01-02T03:04:05Z'"),
        (.literal(.dateTime(Timestamp(ticks: 17_041_644_451_230_000))), "datetimeoffset'2024-01-02T03:00:45.123Z'"),
        (.p("updatedAt"), "updatedAt"),
        (.op(.or, .p("a"), .op(.and, .p("b"), .p("c"))), "a or b and c"),
        (.op(.and, .op(.or, .p("a"), .p("b")), .p("c")), "(a or b) and c"),
        (.op(.or, .op(.or, .p("a"), .p("b")), .p("c")), "a or b or c"),
        (.op(.or, .p("a"), .op(.or, .p("b"), .p("c"))), "a or (b or c)"),
        (.op(.sub, .op(.sub, .p("a"), .p("b")), .p("c")), "a sub b sub c"),
        (.op(.sub, .p("a"), .op(.sub, .p("b"), .p("c"))), "a sub (b sub c)"),
        (.op(.mul, .op(.add, .p("a"), .int(1)), .int(2)), "(a add 1) mul 2"),
        (.op(.add, .p("a"), .op(.mul, .int(1), .int(2))), "a add 1 mul 2"),
        (.op(.eq, .op(.eq, .p("a"), .p("b")), .p("c")), "a eq b eq c"),
        (.op(.eq, .p("a"), .op(.eq, .p("b"), .p("c"))), "a eq (b eq c)"),
        (.unary(.not, .op(.eq, .p("a"), .p("b"))), "not (a eq b)"),
        (.op(.eq, .unary(.not, .p("a")), .p("b")), "not a eq b"),
        (.unary(.not, .unary(.not, .p("a"))), "not not a"),
        (.unary(.negate, .p("a")), "-a"),
        (.unary(.negate, .int(5)), "-(5)"),
        (.unary(.negate, .int(-5)), "-(-5)"),
        (.unary(.negate, .dbl(2.5)), "-(2.5)"),
        (.unary(.negate, .op(.add, .p("a"), .int(1))), "-(a add 1)"),
        (.op(.sub, .p("a"), .int(-1)), "a sub -1"),
        (.in(.p("id"), [.str("a"), .str("b")]), "id in ('a', 'b')"),
        (.in(.op(.eq, .p("a"), .p("b")), [.bool(true)]), "a eq b in (true)"),
        (.op(.eq, .p("a"), .in(.p("b"), [.int(1)])), "a eq (b in (1))"),
        (.in(.op(.or, .p("a"), .p("b")), [.op(.or, .p("c"), .p("d"))]), "(a or b) in (c or d)"),
        (.call(.substringof, .str("milk"), .p("text")), "substringof('milk', text)"),
        (.call(.substring, .p("text"), .int(1), .int(2)), "substring(text, 1, 2)"),
        (.call(.castDateTimeOffset, .p("createdAt")), "cast(createdAt, Edm.DateTimeOffset)"),
        (.call(.replace, .p("text"), .str("'"), .str("")), "replace(text, '''', '')"),
        (.call(.isof, .p("n"), .str("Edm.Double")), "isof(n, Edm.Double)"),
        (
            .call(.startswith, .call(.tolower, .p("text")), .op(.or, .p("a"), .p("b"))),
            "startswith(tolower(text), a or b)"
        )
    ]

    @Test(arguments: printed)
    func printsMinimalText(expression: FilterExpression, text: String) throws {
        #expect(FilterPrinter.print(expression) == text)
        #expect(try FilterParser.parse(text) == expression)
    }

    /// DESIGN §6: watermarks lost precision when clients re-formatted them. What the server wrote goes back.
    @Test func watermarksKeepTheServersTextExactly() throws {
        for text in [
            "2024-01-02T03:04:05.1234567Z", "2024-01-02T03:04:05.1230000+00:00", "2024-01-02T03:04:05Z",
            "2024-01-02T05:04:05.12+02:00"
        ] {
            let watermark = try #require(Timestamp(parsing: text))
            let filter = FilterExpression.op(.gt, .p("updatedAt"), .literal(.dateTime(watermark)))
            #expect(FilterPrinter.print(filter) == "updatedAt gt datetimeoffset'\(text)'")
            #expect(FilterPrinter.print(filter, dateTimes: .bare) == "updatedAt gt \(text)")
            #expect(try FilterParser.parse(FilterPrinter.print(filter, dateTimes: .bare)) == filter)
        }
    }

    static let texts = [
        """
        (updatedAt gt datetimeoffset'2024-01-02T03:04:05.1230000+00:00') or ((updatedAt eq \
        datetimeoffset'2024-01-02T03:04:05.1230000+00:00') and (id gt 'abc'))
        """,
        "(complete eq false)",
        "substringof('milk',text)",
        "a or b and not c eq -5 add x mul 2.5",
        "x in (1, 'a', null) and cast(t, 'Edm.DateTimeOffset') gt 2024-01-02T03:04:05Z",
        "--5 sub - 5 sub -(5)",
        "round(n div 3.0) ge floor(ceiling(n) mod 2) and length(trim(concat(a, b))) le 3M",
        "indexof(toupper(text), 'MILK') ne -1 or endswith(text, '''') or year(updatedAt) eq 2024",
        "month(d) add day(d) add hour(d) add minute(d) add second(d) gt 0 and 1e-7 lt 9223372036854775808",
        "NOT (Complete EQ TRUE) AND StartsWith(Text, 'x')",
        "deleted",
        "isof(n, 'Edm.Double') and replace(text, ' ', '') eq 'Buymilk'"
    ]

    @Test(arguments: texts)
    func textsRoundTrip(text: String) throws {
        let expression = try FilterParser.parse(text)
        #expect(try FilterParser.parse(FilterPrinter.print(expression)) == expression)
        #expect(
            FilterPrinter.print(try FilterParser.parse(FilterPrinter.print(expression)))
                == FilterPrinter.print(expression))
    }

    /// Any tree the parser could produce prints to text that parses back to the same tree.
    @Test func randomTreesRoundTrip() throws {
        var rng = SeededGenerator(seed: 0xF11_7E55)
        for _ in 0..<3_000 {
            let expression = RandomFilter.expression(depth: 6, using: &rng)
            let text = FilterPrinter.print(expression)
            let reparsed = try FilterParser.parse(text)
            #expect(reparsed == expression, "\(text)")
            #expect(FilterPrinter.print(reparsed) == text)
        }
    }
}
