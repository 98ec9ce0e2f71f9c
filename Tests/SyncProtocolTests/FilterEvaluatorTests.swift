import Testing
import TestSupport
@testable import SyncProtocol

@Suite struct FilterEvaluatorTests {
    static let record: [String: JSONValue] = [
        "id": "abc",
        "text": "Buy milk",
        "complete": false,
        "done": true,
        "n": 5,
        "x": 2.5,
        "big": .integer(.max),
        "updatedAt": "2024-01-02T03:04:05.123Z",
        "empty": nil,
        "tags": ["a"],
        "nested": ["a": 1],
        "spaced": "  hi  "
    ]

    static func matches(_ text: String) throws -> Bool {
        FilterEvaluator.matches(try FilterParser.parse(text), record: record)
    }

    static func value(_ text: String) throws -> FilterLiteral {
        FilterEvaluator.evaluate(try FilterParser.parse(text), record: record)
    }

    // MARK: - Conditions

    static let conditionCases: [(String, Bool)] = [
        // Null and missing properties: eq/ne are null-safe, ordering with null is false.
        ("missing eq null", true),
        ("empty eq null", true),
        ("tags eq null", true),
        ("nested eq null", true),
        ("text eq null", false),
        ("text ne null", true),
        ("missing ne null", false),
        ("null eq null", true),
        ("missing eq empty", true),
        ("missing gt 1", false),
        ("missing lt 1", false),
        ("not (missing lt 1)", true),
        ("null ge null", false),
        ("n gt null", false),
        // Bare booleans as conditions.
        ("done", true),
        ("complete", false),
        ("not complete", true),
        ("not done", false),
        ("missing", false),
        ("not missing", false),
        ("text", false),
        // Numbers compare by exact value across integers and doubles.
        ("n eq 5.0", true),
        ("n lt 5.5", true),
        ("x gt 2", true),
        ("x eq 2.5", true),
        ("big eq 9223372036854775807", true),
        ("big lt 9223372036854775808", true),
        ("big eq 9223372036854775808", false),
        ("9007199254740993 gt 9007199254740992.0", true),
        ("-9223372036854775808 gt -9223372036854775807.0", false),
        ("-9223372036854775808 eq -9223372036854775808.0", true),
        ("-1 lt -0.5", true),
        ("-1 gt -1.5", true),
        // Strings compare ordinally by code point.
        ("text eq 'Buy milk'", true),
        ("text eq 'buy milk'", false),
        ("'B' lt 'a'", true),
        ("'abc' lt 'abd'", true),
        ("'ab' lt 'abc'", true),
        ("'z' lt 'é'", true),
        ("'\u{FFFF}' lt '\u{1F600}'", true),
        ("'é' eq 'e\u{301}'", false),
        ("'' lt 'a'", true),
        // Booleans.
        ("complete eq false", true),
        ("false lt true", true),
        ("done gt complete", true),
        // Dates: instants, whatever the zone; strings parse when compared with a date.
        ("updatedAt eq datetimeoffset'2024-01-02T04:04:05.123+01:00'", true),
        ("updatedAt eq datetimeoffset'2024-01-02T03:04:05.1230000+00:00'", true),
        ("updatedAt gt 2024-01-02T03:04:05.122Z", true),
        ("updatedAt ge 2024-01-02T03:04:05.123Z", true),
        ("updatedAt gt 2024-01-02T03:04:05.123Z", false),
        ("updatedAt lt datetime'2024-01-02T03:04:05.1231'", true),
        ("2024-01-02T03:04:05.122Z lt updatedAt", true),
        ("updatedAt eq '2024-01-02T03:04:05.123Z'", true),
        ("updatedAt eq '2024-01-02T03:04:05.1230Z'", false),
        ("text eq 2024-01-02T03:04:05Z", false),
        ("text ne 2024-01-02T03:04:05Z", true),
        ("text lt 2024-01-02T03:04:05Z", false),
        ("cast(updatedAt, Edm.DateTimeOffset) eq cast('2024-01-02T03:04:05.1230Z', Edm.DateTimeOffset)", true),
        // Different kinds are never equal and never ordered.
        ("n eq '5'", false),
        ("n ne '5'", true),
        ("n lt '6'", false),
        ("complete eq 0", false),
        ("done eq 1", false),
        ("n eq updatedAt", false),
        // Logic.
        ("complete eq false and n eq 5", true),
        ("complete eq true or n eq 5", true),
        ("complete eq true or n eq 6", false),
        ("missing or n eq 5", true),
        ("missing and n eq 5", false),
        // in is a disjunction of null-safe eq.
        ("n in (1, 5)", true),
        ("n in (5.0)", true),
        ("n in (1, 2)", false),
        ("missing in (null)", true),
        ("missing in (1)", false),
        ("text in ('a', 'Buy milk')", true),
        ("updatedAt in (2024-01-02T04:04:05.123+01:00)", true),
        // The Azure SDK's incremental pull filter.
        (
            """
            (updatedAt gt datetimeoffset'2024-01-02T03:04:05.1230000+00:00') or ((updatedAt eq \
            datetimeoffset'2024-01-02T03:04:05.1230000+00:00') and (id gt 'abb'))
            """,
            true
        ),
        (
            """
            (updatedAt gt datetimeoffset'2024-01-02T03:04:05.1230000+00:00') or ((updatedAt eq \
            datetimeoffset'2024-01-02T03:04:05.1230000+00:00') and (id gt 'abc'))
            """,
            false
        ),
        ("substringof('milk',text)", true),
        ("substringof('Milk',text)", false),
        ("startswith(tolower(text), 'buy') and complete eq false", true)
    ]

    @Test(arguments: conditionCases)
    func conditions(text: String, expected: Bool) throws {
        #expect(try Self.matches(text) == expected)
    }

    static let logic: [(String, FilterLiteral)] = [
        ("missing and false", .bool(false)),
        ("false and missing", .bool(false)),
        ("missing and true", .null),
        ("missing or true", .bool(true)),
        ("missing or false", .null),
        ("missing or missing", .null),
        ("not missing", .null),
        ("not text", .null),
        ("text and true", .null),
        ("n eq missing", .bool(false)),
        ("missing lt n", .bool(false))
    ]

    @Test(arguments: logic)
    func threeValuedLogic(text: String, expected: FilterLiteral) throws {
        #expect(try Self.value(text) == expected)
    }

    // MARK: - Values

    static let arithmeticCases: [(String, FilterLiteral)] = [
        ("n add 1", .integer(6)),
        ("n sub 7", .integer(-2)),
        ("n mul 2", .integer(10)),
        ("n div 2", .integer(2)),
        ("-7 div 2", .integer(-3)),
        ("-7 mod 2", .integer(-1)),
        ("7 mod -2", .integer(1)),
        ("n div 2.0", .double(2.5)),
        ("x mul 2", .double(5)),
        ("x add n", .double(7.5)),
        ("5.5 mod 2", .double(1.5)),
        ("-5.5 mod 2", .double(-1.5)),
        ("n div 0", .null),
        ("n mod 0", .null),
        ("x div 0", .null),
        ("x div 0.0", .null),
        ("x mod 0.0", .null),
        ("9223372036854775807 add 1", .double(9_223_372_036_854_775_808)),
        ("-9223372036854775808 sub 1", .double(-9_223_372_036_854_775_808)),
        ("9223372036854775807 mul 2", .double(18_446_744_073_709_551_616)),
        ("-9223372036854775808 div -1", .double(9_223_372_036_854_775_808)),
        ("-9223372036854775808 mod -1", .integer(0)),
        ("-(-9223372036854775808)", .double(9_223_372_036_854_775_808)),
        ("1e308 mul 10", .null),
        ("-n", .integer(-5)),
        ("-x", .double(-2.5)),
        ("-text", .null),
        ("-missing", .null),
        ("n add null", .null),
        ("n add missing", .null),
        ("n add 'a'", .null),
        ("n add true", .null),
        ("updatedAt add 1", .null)
    ]

    @Test(arguments: arithmeticCases)
    func arithmetic(text: String, expected: FilterLiteral) throws {
        #expect(try Self.value(text) == expected)
    }

    static let strings: [(String, FilterLiteral)] = [
        ("startswith(text, 'Buy')", .bool(true)),
        ("startswith(text, 'buy')", .bool(false)),
        ("startswith(text, '')", .bool(true)),
        ("startswith('a', 'ab')", .bool(false)),
        ("endswith(text, 'milk')", .bool(true)),
        ("endswith('a', 'aa')", .bool(false)),
        ("endswith('é', 'e\u{301}')", .bool(false)),
        ("contains(text, 'y m')", .bool(true)),
        ("contains(text, 'tea')", .bool(false)),
        ("substringof('milk', text)", .bool(true)),
        ("substringof(text, 'milk')", .bool(false)),
        ("indexof(text, 'milk')", .integer(4)),
        ("indexof(text, 'tea')", .integer(-1)),
        ("indexof(text, '')", .integer(0)),
        ("indexof('\u{1F600}ab', 'a')", .integer(1)),
        ("length(text)", .integer(8)),
        ("length('\u{1F600}é')", .integer(2)),
        ("length('e\u{301}')", .integer(2)),
        ("length('')", .integer(0)),
        ("tolower(text)", .string("buy milk")),
        ("toupper(text)", .string("BUY MILK")),
        ("tolower('ÀÉÎ')", .string("àéî")),
        ("toupper('straße')", .string("STRASSE")),
        ("trim(spaced)", .string("hi")),
        ("trim('\thi ')", .string("\thi")),
        ("trim('   ')", .string("")),
        ("concat(text, '!')", .string("Buy milk!")),
        ("concat(text, 1)", .null),
        ("substring(text, 4)", .string("milk")),
        ("substring(text, 4, 2)", .string("mi")),
        ("substring(text, 0, 0)", .string("")),
        ("substring(text, -1, 2)", .string("Bu")),
        ("substring(text, 20)", .string("")),
        ("substring(text, 2, -1)", .string("")),
        ("substring(text, 6, 100)", .string("lk")),
        ("substring('\u{1F600}ab', 1)", .string("ab")),
        ("substring(text, 1.0, 2)", .string("uy")),
        ("substring(text, 1.5)", .null),
        ("substring(text, '1')", .null),
        ("substring(text, 9223372036854775807, 9223372036854775807)", .string("")),
        ("substring(text, 1, 9223372036854775807)", .string("uy milk")),
        ("replace(text, 'milk', 'tea')", .string("Buy tea")),
        ("replace('aaa', 'aa', 'b')", .string("ba")),
        ("replace(text, '', 'x')", .string("Buy milk")),
        ("replace(text, 'zzz', 'x')", .string("Buy milk")),
        ("replace('e\u{301}e', 'e', 'a')", .string("a\u{301}a")),
        ("replace('é', 'e', 'a')", .string("é")),
        ("replace(text, 'm', n)", .null),
        ("replace(missing, 'a', 'b')", .null),
        ("startswith(missing, 'a')", .null),
        ("startswith(n, 'a')", .null),
        ("length(missing)", .null),
        ("length(n)", .null),
        ("concat(missing, 'a')", .null),
        ("tolower(null)", .null),
        ("substring(missing, 1)", .null),
        ("substring(text, null)", .null)
    ]

    @Test(arguments: strings)
    func stringFunctions(text: String, expected: FilterLiteral) throws {
        #expect(try Self.value(text) == expected)
    }

    static let datesAndNumbers: [(String, FilterLiteral)] = [
        ("year(updatedAt)", .integer(2024)),
        ("month(updatedAt)", .integer(1)),
        ("day(updatedAt)", .integer(2)),
        ("hour(updatedAt)", .integer(3)),
        ("minute(updatedAt)", .integer(4)),
        ("second(updatedAt)", .integer(5)),
        ("hour(datetimeoffset'2024-01-02T23:30:00-02:00')", .integer(1)),
        ("day(datetimeoffset'2024-01-02T23:30:00-02:00')", .integer(3)),
        ("year(datetimeoffset'2024-01-01T00:30:00+01:00')", .integer(2023)),
        ("second(2024-01-02T03:04:59.9999999Z)", .integer(59)),
        ("year(text)", .null),
        ("year(n)", .null),
        ("year(missing)", .null),
        ("round(2.5)", .double(3)),
        ("round(-2.5)", .double(-3)),
        ("round(2.4)", .double(2)),
        ("round(n)", .integer(5)),
        ("floor(-2.5)", .double(-3)),
        ("floor(x)", .double(2)),
        ("ceiling(-2.5)", .double(-2)),
        ("ceiling(x)", .double(3)),
        ("round('a')", .null),
        ("floor(missing)", .null),
        ("cast(text, Edm.DateTimeOffset)", .null),
        ("cast(n, Edm.DateTimeOffset)", .null),
        ("cast(missing, Edm.DateTimeOffset)", .null),
        ("isof(text, Edm.String)", .bool(true)),
        ("isof(text, Edm.Double)", .bool(false)),
        ("isof(n, Edm.Double)", .bool(true)),
        ("isof(x, Edm.Double)", .bool(true)),
        ("isof(done, Edm.Boolean)", .bool(true)),
        ("isof(updatedAt, Edm.String)", .bool(true)),
        ("isof(2024-01-02T03:04:05Z, Edm.String)", .bool(false)),
        ("isof(missing, Edm.String)", .bool(false)),
        ("isof(empty, Edm.String)", .bool(false)),
        ("isof(tags, Edm.String)", .bool(false)),
        ("isof(length(text), Edm.Double)", .bool(true))
    ]

    @Test(arguments: datesAndNumbers)
    func dateAndNumberFunctions(text: String, expected: FilterLiteral) throws {
        #expect(try Self.value(text) == expected)
    }

    @Test func castKeepsTheInstant() throws {
        let expected = try #require(Timestamp(parsing: "2024-01-02T03:04:05.123Z"))
        #expect(try Self.value("cast(updatedAt, Edm.DateTimeOffset)") == .dateTime(expected))
        #expect(try Self.value("2024-01-02T03:04:05.123Z") == .dateTime(expected))
    }

    @Test func recordsAsJSONValues() throws {
        let filter = try FilterParser.parse("text eq 'a' and missing eq null")
        #expect(FilterEvaluator.matches(filter, record: ["text": "a"] as JSONValue))
        #expect(!FilterEvaluator.matches(filter, record: ["text": "b"] as JSONValue))
        #expect(!FilterEvaluator.matches(filter, record: ["a"] as JSONValue))
        #expect(FilterEvaluator.matches(try FilterParser.parse("text eq null"), record: "not an object" as JSONValue))
    }

    /// Trees the parser never produces (NaN, infinities, wrong arities, empty lists) still evaluate, and
    /// non-finite doubles read as null.
    static let handBuiltCases: [(FilterExpression, FilterLiteral)] = [
        (.dbl(.nan), .null),
        (.dbl(.infinity), .null),
        (.op(.eq, .dbl(.nan), .null), .bool(true)),
        (.op(.lt, .int(1), .dbl(.infinity)), .bool(false)),
        (.op(.eq, .p("nan"), .null), .bool(true)),
        (.call(.length), .null),
        (.call(.substring, .str("a")), .null),
        (.call(.year), .null),
        (.call(.round), .null),
        (.call(.castDateTimeOffset), .null),
        (.call(.replace, .str("a"), .str("a")), .null),
        (.call(.isof, .p("text")), .null),
        (.call(.isof, .p("text"), .str("Edm.Int32")), .null),
        (.call(.startswith, .str("a")), .null),
        (.in(.int(1), []), .bool(false))
    ]

    @Test(arguments: handBuiltCases)
    func handBuiltTreesNeverTrap(expression: FilterExpression, expected: FilterLiteral) {
        #expect(FilterEvaluator.evaluate(expression, record: ["nan": .double(.nan)]) == expected)
    }

    /// Random trees over a record of extreme values: no overflow trap, no crash, whatever the combination.
    @Test func randomTreesEvaluateWithoutTrapping() {
        var rng = SeededGenerator(seed: 0xE7A1)
        let extremes: [String: JSONValue] = [
            "id": "", "text": "'é😀", "complete": true, "updatedAt": "2024-02-29T23:59:59.9999999Z",
            "n": .integer(.min), "x_1": .double(.greatestFiniteMagnitude), "_private": .integer(.max), "Übung": nil
        ]
        for _ in 0..<3_000 {
            _ = FilterEvaluator.evaluate(RandomFilter.expression(depth: 6, using: &rng), record: extremes)
        }
    }
}
