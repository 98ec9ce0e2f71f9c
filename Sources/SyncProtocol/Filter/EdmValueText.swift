/// The text forms of OData's `Edm.Date`, `Edm.TimeOfDay` and `Edm.Guid` values, which Datasync's clients send
/// (`cast(1994-10-14,Edm.Date)`, `07:14:00`, `cast(<guid>,Edm.Guid)`), and how a string stored in a record is read
/// as one of them. One place for these rules: the lexer, the local evaluator and the server's SQL follow them.
///
/// ```swift
/// EdmValueText.date("1994-10-14")                          // "1994-10-14"
/// EdmValueText.timeOfDay("07:14")                          // "07:14:00"
/// EdmValueText.guid("29386779-34B1-464A-BB5B-4053C2EE61B3") // "29386779-34b1-464a-bb5b-4053c2ee61b3"
/// EdmValueText.storedDate("2018-02-16T23:00:00.000Z")      // "2018-02-16"
/// ```
///
/// Stored strings are read by their shape, without conversion, so that SQL can read them the same way:
/// - a date is a string of exactly `yyyy-MM-dd`, or the first ten characters of one that goes on with `T` (the date
///   part of a date-time as written, not converted to UTC: TableSync and Azure's clients write UTC);
/// - a time of day is a string of exactly `HH:mm:ss`, or one that goes on with `.` (a fraction), compared as text;
/// - a guid is a string of 8-4-4-4-12 hexadecimal digits in any case (``guid(_:)`` reads it), compared in lowercase,
///   as .NET compares `Guid` values whatever case they were written in.
public enum EdmValueText {
    /// The canonical `yyyy-MM-dd` of a date literal, or `nil` when `text` is not a valid calendar date.
    public static func date(_ text: some StringProtocol) -> String? {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count == 10, matches(scalars, "dddd-dd-dd"),
            let year = number(scalars[0..<4]), let month = number(scalars[5..<7]), let day = number(scalars[8..<10]),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        return String(text)
    }

    /// The canonical `HH:mm:ss[.fraction]` of a time-of-day literal (`HH:mm`, `HH:mm:ss` or `HH:mm:ss.f…` with up
    /// to 12 fraction digits, as OData writes `Edm.TimeOfDay`), or `nil` when `text` is not one.
    public static func timeOfDay(_ text: some StringProtocol) -> String? {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count >= 5, matches(scalars[0..<5], "dd:dd"), let hour = number(scalars[0..<2]),
            let minute = number(scalars[3..<5]), hour < 24, minute < 60
        else { return nil }
        if scalars.count == 5 { return String(text) + ":00" }
        guard scalars.count >= 8, matches(scalars[5..<8], ":dd"), let second = number(scalars[6..<8]), second < 60
        else { return nil }
        if scalars.count == 8 { return String(text) }
        let fraction = scalars[9...]
        guard scalars[8] == ".", (1...12).contains(fraction.count), fraction.allSatisfy(isDigit) else { return nil }
        return String(text)
    }

    /// The lowercase form of a guid literal (8-4-4-4-12 hexadecimal digits), or `nil` when `text` is not one.
    public static func guid(_ text: some StringProtocol) -> String? {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count == 36, matches(scalars, guidPattern) else { return nil }
        return String(text).lowercased()
    }

    /// The date a stored string holds (see above), or `nil` when it holds none.
    public static func storedDate(_ text: String) -> String? {
        let scalars = Array(text.unicodeScalars.prefix(11))
        guard scalars.count >= 10, matches(scalars[0..<10], "dddd-dd-dd") else { return nil }
        guard scalars.count == 10 || scalars[10] == "T" || scalars[10] == "t" else { return nil }
        return String(String.UnicodeScalarView(scalars[0..<10]))
    }

    /// The time of day a stored string holds (see above), or `nil` when it holds none.
    public static func storedTimeOfDay(_ text: String) -> String? {
        let scalars = Array(text.unicodeScalars.prefix(9))
        guard scalars.count >= 8, matches(scalars[0..<8], "dd:dd:dd"), scalars.count == 8 || scalars[8] == "."
        else { return nil }
        return text
    }

    /// The shape of a guid for ``matches(_:_:)``.
    static let guidPattern = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"

    /// `true` when `text` starts a bare guid literal: 36 scalars of its shape, not followed by a letter or digit.
    static func startsGuid(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        guard index + 36 <= scalars.count, matches(scalars[index..<index + 36], guidPattern) else { return false }
        guard index + 36 < scalars.count else { return true }
        let after = scalars[index + 36]
        return !(after.properties.isAlphabetic || isDigit(after) || after == "_")
    }

    /// `true` when `scalars` follow `pattern`: `d` a decimal digit, `x` a hexadecimal one, anything else itself.
    static func matches(_ scalars: some Collection<Unicode.Scalar>, _ pattern: String) -> Bool {
        guard scalars.count == pattern.unicodeScalars.count else { return false }
        return zip(scalars, pattern.unicodeScalars).allSatisfy { scalar, expected in
            switch expected {
            case "d": isDigit(scalar)
            case "x": isDigit(scalar) || ("a"..."f").contains(scalar) || ("A"..."F").contains(scalar)
            default: scalar == expected
            }
        }
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }

    private static func number(_ digits: ArraySlice<Unicode.Scalar>) -> Int? {
        Int(String(String.UnicodeScalarView(digits)))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
