import Testing
@testable import SyncProtocol

/// The `Edm.Date`, `Edm.TimeOfDay` and `Edm.Guid` literals Datasync's clients send (issue 45, item 3): their text
/// forms, how the parser reads them, how the evaluator compares them with stored strings, and how they print.
@Suite struct EdmLiteralTests {
    // MARK: - Text forms

    static let dates: [(String, String?)] = [
        ("1994-10-14", "1994-10-14"), ("2024-02-29", "2024-02-29"), ("2000-02-29", "2000-02-29"),
        ("1900-02-29", nil), ("2023-02-29", nil), ("2024-13-01", nil), ("2024-00-10", nil), ("2024-04-31", nil),
        ("2024-4-01", nil), ("1994-10-14T00:00:00Z", nil), ("", nil)
    ]

    @Test(arguments: dates)
    func dateText(text: String, expected: String?) {
        #expect(EdmValueText.date(text) == expected)
    }

    static let times: [(String, String?)] = [
        ("07:14", "07:14:00"), ("07:14:00", "07:14:00"), ("23:59:59.9999999", "23:59:59.9999999"),
        ("09:52:35.321", "09:52:35.321"), ("24:00", nil), ("12:60", nil), ("12:00:60", nil), ("7:14", nil),
        ("07:14:00.", nil), ("07:14:0", nil), ("07:14:00.1234567890123", nil)
    ]

    @Test(arguments: times)
    func timeOfDayText(text: String, expected: String?) {
        #expect(EdmValueText.timeOfDay(text) == expected)
    }

    static let guids: [(String, String?)] = [
        ("29386779-34B1-464A-BB5B-4053C2EE61B3", "29386779-34b1-464a-bb5b-4053c2ee61b3"),
        ("29386779-34b1-464a-bb5b-4053c2ee61b3", "29386779-34b1-464a-bb5b-4053c2ee61b3"),
        ("29386779-34b1-464a-bb5b-4053c2ee61bg", nil), ("2938677934b1464abb5b4053c2ee61b3", nil),
        ("{29386779-34b1-464a-bb5b-4053c2ee61b3}", nil)
    ]

    @Test(arguments: guids)
    func guidText(text: String, expected: String?) {
        #expect(EdmValueText.guid(text) == expected)
    }

    static let storedDates: [(String, String?)] = [
        ("2018-02-16", "2018-02-16"), ("2018-02-16T23:00:00.000Z", "2018-02-16"), ("2018-02-16t23:00", "2018-02-16"),
        ("2018-02-16 23:00", nil), ("2018-02-1", nil), ("x2018-02-16", nil), ("2018-02-160", nil)
    ]

    @Test(arguments: storedDates)
    func storedDateText(text: String, expected: String?) {
        #expect(EdmValueText.storedDate(text) == expected)
    }

    static let storedTimes: [(String, String?)] = [
        ("02:14:00", "02:14:00"), ("02:14:00.500", "02:14:00.500"), ("02:14", nil), ("02:14:00Z", nil),
        ("2:14:00", nil)
    ]

    @Test(arguments: storedTimes)
    func storedTimeOfDayText(text: String, expected: String?) {
        #expect(EdmValueText.storedTimeOfDay(text) == expected)
    }

    // MARK: - Parsing

    static let guid = "29386779-34b1-464a-bb5b-4053c2ee61b3"

    /// The forms of Datasync's `ODataExpressionVisitor` (`cast(…,Edm.Date)` and friends, without spaces) and the
    /// bare OData v4 forms, as Datasync's `Query_Tests.cs` (Query_Test_030, Query_Test_031) and the client's
    /// `ODataExpressionVisitor_Tests.cs` send them.
    static let parsed: [(String, FilterExpression)] = [
        (
            "releaseDate eq cast(1994-10-14,Edm.Date)",
            .binary(.eq, .property("releaseDate"), .literal(.date("1994-10-14")))
        ),
        ("releaseDate ge 1999-12-31", .binary(.ge, .property("releaseDate"), .literal(.date("1999-12-31")))),
        ("cast('1994-10-14', 'Edm.Date') lt d", .binary(.lt, .literal(.date("1994-10-14")), .property("d"))),
        ("t eq cast(07:14:00,Edm.TimeOfDay)", .binary(.eq, .property("t"), .literal(.timeOfDay("07:14:00")))),
        ("t gt 02:14", .binary(.gt, .property("t"), .literal(.timeOfDay("02:14:00")))),
        ("t lt 02:14:00.5", .binary(.lt, .property("t"), .literal(.timeOfDay("02:14:00.5")))),
        (
            "g eq cast(29386779-34B1-464A-BB5B-4053C2EE61B3,Edm.Guid)",
            .binary(.eq, .property("g"), .literal(.guid(guid)))
        ),
        ("id eq \(guid)", .binary(.eq, .property("id"), .literal(.guid(guid)))),
        (
            "id eq deadbeef-0000-0000-0000-000000000000",
            .binary(.eq, .property("id"), .literal(.guid("deadbeef-0000-0000-0000-000000000000")))
        ),
        (
            "n sub 1994 eq 1",
            .binary(.eq, .binary(.sub, .property("n"), .literal(.integer(1994))), .literal(.integer(1)))
        )
    ]

    @Test(arguments: parsed)
    func parses(text: String, expected: FilterExpression) throws {
        #expect(try FilterParser.parse(text) == expected)
    }

    static let refused: [(String, String)] = [
        ("d eq 1994-02-30", "invalid date '1994-02-30'"),
        ("t eq 25:00:00", "invalid time of day '25:00:00'"),
        ("d eq cast(d2, Edm.Date)", "cast to Edm.Date takes a literal of that type"),
        ("d eq cast(07:14:00, Edm.Date)", "cast to Edm.Date takes a literal of that type"),
        ("g eq cast('x', Edm.Guid)", "cast to Edm.Guid takes a literal of that type"),
        ("n eq cast(1, Edm.Int32)", "cast supports Edm.DateTimeOffset, Edm.Date, Edm.TimeOfDay and Edm.Guid")
    ]

    @Test(arguments: refused)
    func refuses(text: String, reason: String) {
        #expect {
            try FilterParser.parse(text)
        } throws: { error in
            (error as? FilterParseError)?.reason.contains(reason) == true
        }
    }

    @Test(arguments: parsed.map(\.1))
    func printsBackToTheSameTree(expression: FilterExpression) throws {
        #expect(try FilterParser.parse(FilterPrinter.print(expression)) == expression)
    }

    // MARK: - Evaluation

    static let records: [String: [String: JSONValue]] = [
        "dateOnly": ["d": "1994-10-14", "t": "02:14:00", "g": "29386779-34B1-464A-BB5B-4053C2EE61B3"],
        "dateTime": ["d": "1994-10-14T23:30:00.000Z", "t": "02:14:00.500", "g": .string(guid)],
        "later": ["d": "1999-12-31T00:00:00.000Z", "t": "07:14:00", "g": "00000000-0000-0000-0000-000000000000"],
        "notDates": ["d": "14/10/1994", "t": "2:14", "g": "not a guid"],
        "missing": [:]
    ]

    static let selections: [(String, Set<String>)] = [
        ("d eq cast(1994-10-14,Edm.Date)", ["dateOnly", "dateTime"]),
        ("d ne 1994-10-14", ["later", "notDates", "missing"]),
        ("d gt 1994-10-14", ["later"]), ("d ge 1994-10-14", ["dateOnly", "dateTime", "later"]),
        ("d lt 1999-12-31", ["dateOnly", "dateTime"]), ("1999-12-31 le d", ["later"]),
        ("d in (1994-10-14, 2000-01-01)", ["dateOnly", "dateTime"]),
        ("t eq 02:14:00", ["dateOnly"]), ("t gt cast(02:14:00,Edm.TimeOfDay)", ["dateTime", "later"]),
        ("t le 07:14", ["dateOnly", "dateTime", "later"]),
        ("g eq cast(29386779-34b1-464a-bb5b-4053c2ee61b3,Edm.Guid)", ["dateOnly", "dateTime"]),
        ("g ne \(guid)", ["later", "notDates", "missing"]), ("g lt \(guid)", ["later"]),
        ("d eq 02:14:00", []), ("g eq 1994-10-14", [])
    ]

    @Test(arguments: selections)
    func selects(text: String, expected: Set<String>) throws {
        let filter = try FilterParser.parse(text)
        let selected = Set(Self.records.filter { FilterEvaluator.matches(filter, record: $0.value) }.keys)
        #expect(selected == expected)
    }
}
