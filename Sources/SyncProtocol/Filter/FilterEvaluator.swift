/// Evaluates a ``FilterExpression`` against one record, locally. These rules are the reference: the
/// server's SQL translation must select exactly the records for which ``matches(_:record:)`` is `true`.
///
/// ```swift
/// let filter = try FilterParser.parse("startswith(tolower(text), 'buy') and complete eq false")
/// FilterEvaluator.matches(filter, record: ["id": "a1", "text": "Buy milk", "complete": false])   // true
/// ```
///
/// **Values** are the literal kinds (``FilterLiteral``). A property reads the record's value of that
/// name: JSON `null`, a missing property and an array or object all read as `null`. Dates are stored in
/// records as ISO 8601 strings; a string becomes a date only where a date is needed (see below).
///
/// **Null and logic.** `x eq null` is `true` only when `x` is null (or missing), `x ne null` is its
/// negation, and two nulls are equal (SQL `IS` / `IS NOT DISTINCT FROM`). An ordering comparison
/// (`gt ge lt le`) with a null operand is `false`, never null. So comparisons are always `true` or
/// `false`; `and`, `or` and `not` use three-valued logic (SQL's): a null or non-boolean operand is unknown,
/// `not unknown` is unknown, `unknown and false` is `false`, `unknown or true` is `true`. A record matches
/// when the whole filter is `true`. A bare boolean property is a condition: `complete`, `not deleted`.
///
/// **Comparisons.** Numbers compare by exact value across integers and doubles (`1 eq 1.0`). Strings
/// compare ordinally by Unicode code points, which is UTF-8 byte order (SQLite's `BINARY` collation,
/// PostgreSQL's `COLLATE "C"`): case-sensitive, no normalisation, so `'é'` precomposed and decomposed differ.
/// Booleans order `false` before `true`. Date-times compare as instants (ticks), whatever zone they were
/// written in; a string compared with a date-time compares as a date-time when it parses as a
/// ``Timestamp`` (so `updatedAt gt datetimeoffset'…'` works on records), and is unequal to it otherwise.
/// Two strings always compare as strings, even when both look like dates: cast one to compare instants.
/// A date, time-of-day or guid literal compares with one of its kind, or with a string that holds one as
/// ``EdmValueText`` reads it (the date part of `"2018-02-16T…"`, a guid in any case), as text; with anything else
/// it is unequal and unordered.
/// Values of different kinds (a string and a number, a boolean and a number) are never equal and never
/// ordered (the server may instead refuse such a filter as a type error).
///
/// **Arithmetic** (`add sub mul div mod`, unary `-`) works on numbers; anything else, including null, gives
/// null. Two integers give an integer; `div` truncates toward zero and `mod` takes the sign of the
/// dividend, as in SQL; when the integer result does not fit in 64 bits it is computed as a double
/// instead. A double operand makes the result a double (`mod` is the truncating remainder, C's `fmod`).
/// Division or `mod` by zero, and any result that is not finite, is null.
///
/// **Functions.** Any null argument, or an argument of the wrong kind, gives null. Strings are measured and
/// indexed in Unicode code points (SQLite's `length`/`instr`/`substr` and PostgreSQL's `length`/`strpos`/
/// `substr` count the same way), and indexes are 0-based as in OData.
/// - `startswith(s, p)`, `endswith(s, p)`, `contains(s, p)` and `substringof(p, s)` (note the order: `s`
///   contains `p`) match code points exactly; an empty `p` always matches.
/// - `indexof(s, p)` is the 0-based index of the first occurrence, `-1` when there is none, `0` for empty `p`.
/// - `length(s)` counts code points. `concat(s, t)` joins two strings.
/// - `replace(s, find, replacement)` replaces every occurrence of `find`, left to right without overlaps, matching
///   code points exactly (as SQLite's and PostgreSQL's `replace`); an empty `find` leaves `s` as it is.
/// - `substring(s, start)` and `substring(s, start, length)`: `start` and `length` are integers (a double
///   with an integral value counts); a negative `start` counts as 0, a negative `length` as 0, and the
///   result is cut at the end of `s` (never an error).
/// - `tolower`, `toupper`: full Unicode default case mapping, independent of locale (`'ß'` upper is
///   `'SS'`; no final-sigma rule). SQLite's own `lower` is ASCII-only, so the server must supply these.
/// - `trim(s)` removes leading and trailing spaces (U+0020) only, like SQL's `trim(s)`.
/// - `year month day hour minute second(d)`: calendar fields of the instant in UTC, for a date-time or a
///   string that parses as one, or a string that is a date without a time (`"2018-02-16"`, midnight UTC);
///   `second` drops the fraction.
/// - `round`, `floor`, `ceiling`: integers stay as they are; doubles stay doubles, `round` goes half away
///   from zero (`round(-2.5)` is `-3.0`, as SQLite's `round` and PostgreSQL's `round(numeric)`).
/// - `cast(x, Edm.DateTimeOffset)`: a date-time, or a string that parses as one, is that date-time;
///   anything else is null.
/// - `isof(x, T)` is `true` when `x` is of the JSON type ``FilterTypeName`` `T` names (a string, a boolean, a
///   number), `false` otherwise, null included: like a comparison, never null. A date literal is none of them;
///   a date in a record (`updatedAt` too) is a string.
/// - `x in (a, b, …)` is `x eq a or x eq b or …` with the `eq` above, so `null in (null)` is `true`.
public enum FilterEvaluator {
    /// `true` when `expression` evaluates to `true` for `record`.
    public static func matches(_ expression: FilterExpression, record: [String: JSONValue]) -> Bool {
        evaluate(expression, record: record) == .bool(true)
    }

    /// `true` when `expression` evaluates to `true` for `record`; a record that is not a JSON object has no
    /// properties.
    public static func matches(_ expression: FilterExpression, record: JSONValue) -> Bool {
        matches(expression, record: record.objectValue ?? [:])
    }

    /// The value of `expression` for `record`, following the rules above.
    public static func evaluate(_ expression: FilterExpression, record: [String: JSONValue]) -> FilterLiteral {
        switch expression {
        case .literal(let literal):
            return finite(literal)
        case .property(let name):
            return value(of: record[name])
        case .unary(.not, let operand):
            return not(evaluate(operand, record: record))
        case .unary(.negate, let operand):
            return negate(evaluate(operand, record: record))
        case .binary(.and, let left, let right):
            return and(evaluate(left, record: record), evaluate(right, record: record))
        case .binary(.or, let left, let right):
            return or(evaluate(left, record: record), evaluate(right, record: record))
        case .binary(let op, let left, let right):
            let lhs = evaluate(left, record: record)
            let rhs = evaluate(right, record: record)
            if let comparison = compare(op, lhs, rhs) { return .bool(comparison) }
            return arithmetic(op, lhs, rhs)
        case .function(let function, let arguments):
            return call(function, arguments.map { evaluate($0, record: record) })
        case .in(let value, let items):
            let lhs = evaluate(value, record: record)
            return .bool(items.contains { equal(lhs, evaluate($0, record: record)) })
        }
    }

    // MARK: - Values

    /// How a record's JSON value appears in the filter language.
    private static func value(of json: JSONValue?) -> FilterLiteral {
        switch json {
        case .bool(let flag): return .bool(flag)
        case .integer(let value): return .integer(value)
        case .double(let value): return finite(.double(value))
        case .string(let text): return .string(text)
        case nil, .null, .array, .object: return .null
        }
    }

    /// Non-finite doubles cannot come from JSON or from the parser; a hand-built one is treated as null
    /// rather than let NaN break the ordering rules.
    private static func finite(_ literal: FilterLiteral) -> FilterLiteral {
        if case .double(let value) = literal, !value.isFinite { return .null }
        return literal
    }

    private static func timestamp(_ value: FilterLiteral) -> Timestamp? {
        switch value {
        case .dateTime(let timestamp): return timestamp
        case .string(let text): return Timestamp(parsing: text)
        default: return nil
        }
    }

    /// The instant whose calendar fields `year()` … `second()` read: a date-time, or a string that is one or is a
    /// date without a time (`"2018-02-16"`, as .NET's `DateOnly` is written), taken as midnight UTC.
    private static func calendarInstant(_ value: FilterLiteral) -> Timestamp? {
        if let instant = timestamp(value) { return instant }
        guard case .string(let text) = value, let date = EdmValueText.date(text) else { return nil }
        return Timestamp(parsing: date + "T00:00:00Z")
    }

    // MARK: - Logic

    private static func truth(_ value: FilterLiteral) -> Bool? {
        if case .bool(let flag) = value { return flag }
        return nil
    }

    private static func not(_ value: FilterLiteral) -> FilterLiteral {
        truth(value).map { .bool(!$0) } ?? .null
    }

    private static func and(_ lhs: FilterLiteral, _ rhs: FilterLiteral) -> FilterLiteral {
        switch (truth(lhs), truth(rhs)) {
        case (false, _), (_, false): return .bool(false)
        case (true, true): return .bool(true)
        default: return .null
        }
    }

    private static func or(_ lhs: FilterLiteral, _ rhs: FilterLiteral) -> FilterLiteral {
        switch (truth(lhs), truth(rhs)) {
        case (true, _), (_, true): return .bool(true)
        case (false, false): return .bool(false)
        default: return .null
        }
    }

    // MARK: - Comparison

    /// The result of a comparison operator, or `nil` when `op` does not compare.
    private static func compare(_ op: FilterBinaryOperator, _ lhs: FilterLiteral, _ rhs: FilterLiteral) -> Bool? {
        switch op {
        case .eq: return equal(lhs, rhs)
        case .ne: return !equal(lhs, rhs)
        case .gt: return order(lhs, rhs).map { $0 > 0 } ?? false
        case .ge: return order(lhs, rhs).map { $0 >= 0 } ?? false
        case .lt: return order(lhs, rhs).map { $0 < 0 } ?? false
        case .le: return order(lhs, rhs).map { $0 <= 0 } ?? false
        case .and, .or, .add, .sub, .mul, .div, .mod: return nil
        }
    }

    private static func equal(_ lhs: FilterLiteral, _ rhs: FilterLiteral) -> Bool {
        if case .null = lhs, case .null = rhs { return true }
        return order(lhs, rhs) == 0
    }

    /// -1, 0 or 1 as `lhs` is before, equal to or after `rhs`; `nil` when they cannot be compared.
    private static func order(_ lhs: FilterLiteral, _ rhs: FilterLiteral) -> Int? {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return sign(a, b)
        case (.double(let a), .double(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.integer(let a), .double(let b)): return order(a, b)
        case (.double(let a), .integer(let b)): return -order(b, a)
        case (.string(let a), .string(let b)):
            if a.utf8.elementsEqual(b.utf8) { return 0 }
            return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
        case (.dateTime, .dateTime), (.dateTime, .string), (.string, .dateTime):
            guard let a = timestamp(lhs), let b = timestamp(rhs) else { return nil }
            return sign(a.ticks, b.ticks)
        case (.date, _), (_, .date), (.timeOfDay, _), (_, .timeOfDay), (.guid, _), (_, .guid):
            guard let (a, b) = edmTexts(lhs, rhs) else { return nil }
            return order(.string(a), .string(b))
        default: return nil
        }
    }

    /// A date, time of day or guid literal and the other operand as texts of its kind (``EdmValueText``), or `nil`
    /// when the other is not of that kind (a string that holds none, a literal of another kind).
    private static func edmTexts(_ lhs: FilterLiteral, _ rhs: FilterLiteral) -> (String, String)? {
        func text(_ value: FilterLiteral, as kind: FilterLiteral) -> String? {
            switch (kind, value) {
            case (.date, .date(let text)), (.timeOfDay, .timeOfDay(let text)), (.guid, .guid(let text)): text
            case (.date, .string(let text)): EdmValueText.storedDate(text)
            case (.timeOfDay, .string(let text)): EdmValueText.storedTimeOfDay(text)
            case (.guid, .string(let text)): EdmValueText.guid(text)
            default: nil
            }
        }
        let kind =
            switch lhs {
            case .date, .timeOfDay, .guid: lhs
            default: rhs
            }
        guard let a = text(lhs, as: kind), let b = text(rhs, as: kind) else { return nil }
        return (a, b)
    }

    private static func sign(_ a: Int64, _ b: Int64) -> Int { a < b ? -1 : (a > b ? 1 : 0) }

    /// Compares an integer with a finite double exactly, without rounding the integer to a double.
    private static func order(_ integer: Int64, _ double: Double) -> Int {
        if double >= 9_223_372_036_854_775_808.0 { return -1 }
        if double < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = double.rounded(.down)
        let wholeInteger = Int64(whole)
        if integer != wholeInteger { return sign(integer, wholeInteger) }
        return double > whole ? -1 : 0
    }

    // MARK: - Arithmetic

    private static func arithmetic(
        _ op: FilterBinaryOperator, _ lhs: FilterLiteral, _ rhs: FilterLiteral
    ) -> FilterLiteral {
        if case .integer(let a) = lhs, case .integer(let b) = rhs { return integerArithmetic(op, a, b) }
        guard let a = number(lhs), let b = number(rhs) else { return .null }
        return doubleArithmetic(op, a, b)
    }

    private static func number(_ value: FilterLiteral) -> Double? {
        switch value {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    private static func integerArithmetic(_ op: FilterBinaryOperator, _ a: Int64, _ b: Int64) -> FilterLiteral {
        let result: (partialValue: Int64, overflow: Bool)
        switch op {
        case .add: result = a.addingReportingOverflow(b)
        case .sub: result = a.subtractingReportingOverflow(b)
        case .mul: result = a.multipliedReportingOverflow(by: b)
        case .div:
            guard b != 0 else { return .null }
            result = a.dividedReportingOverflow(by: b)
        case .mod:
            guard b != 0 else { return .null }
            // Int64.min mod -1 overflows in the machine but is 0 in arithmetic.
            result = b == -1 ? (0, false) : a.remainderReportingOverflow(dividingBy: b)
        case .eq, .ne, .gt, .ge, .lt, .le, .and, .or: return .null
        }
        return result.overflow ? doubleArithmetic(op, Double(a), Double(b)) : .integer(result.partialValue)
    }

    private static func doubleArithmetic(_ op: FilterBinaryOperator, _ a: Double, _ b: Double) -> FilterLiteral {
        let result: Double
        switch op {
        case .add: result = a + b
        case .sub: result = a - b
        case .mul: result = a * b
        case .div:
            guard b != 0 else { return .null }
            result = a / b
        case .mod:
            guard b != 0 else { return .null }
            result = a.truncatingRemainder(dividingBy: b)
        case .eq, .ne, .gt, .ge, .lt, .le, .and, .or: return .null
        }
        return finite(.double(result))
    }

    private static func negate(_ value: FilterLiteral) -> FilterLiteral {
        switch value {
        case .integer(let a): return a == .min ? .double(-Double(a)) : .integer(-a)
        case .double(let a): return .double(-a)
        default: return .null
        }
    }

    // MARK: - Functions

    private static func call(_ function: FilterFunction, _ arguments: [FilterLiteral]) -> FilterLiteral {
        switch function {
        case .startswith, .endswith, .contains, .substringof, .indexof, .concat:
            guard arguments.count == 2, case .string(let a) = arguments[0], case .string(let b) = arguments[1]
            else { return .null }
            return stringPair(function, a, b)
        case .length, .tolower, .toupper, .trim:
            guard arguments.count == 1, case .string(let text) = arguments[0] else { return .null }
            return stringSingle(function, text)
        case .replace:
            guard arguments.count == 3, case .string(let text) = arguments[0], case .string(let find) = arguments[1],
                case .string(let replacement) = arguments[2]
            else { return .null }
            return .string(replace(find, with: replacement, in: text))
        case .isof:
            guard arguments.count == 2, case .string(let name) = arguments[1], let type = FilterTypeName(named: name)
            else { return .null }
            return .bool(type.describes(arguments[0]))
        case .substring:
            return substring(arguments)
        case .year, .month, .day, .hour, .minute, .second:
            guard arguments.count == 1, let timestamp = calendarInstant(arguments[0]) else { return .null }
            return .integer(Int64(dateField(function, timestamp)))
        case .round, .floor, .ceiling:
            return rounding(function, arguments.first ?? .null)
        case .castDateTimeOffset:
            return (arguments.first.flatMap(timestamp)).map { .dateTime($0) } ?? .null
        }
    }

    private static func stringPair(_ function: FilterFunction, _ a: String, _ b: String) -> FilterLiteral {
        switch function {
        case .startswith: return .bool(a.utf8.starts(with: b.utf8))
        case .endswith: return .bool(a.utf8.reversed().starts(with: b.utf8.reversed()))
        case .contains: return .bool(indexOf(b, in: a) != nil)
        case .substringof: return .bool(indexOf(a, in: b) != nil)
        case .indexof: return .integer(Int64(indexOf(b, in: a) ?? -1))
        default: return .string(a + b)
        }
    }

    private static func stringSingle(_ function: FilterFunction, _ text: String) -> FilterLiteral {
        switch function {
        case .length: return .integer(Int64(text.unicodeScalars.count))
        case .tolower: return .string(text.lowercased())
        case .toupper: return .string(text.uppercased())
        default:
            let scalars = text.unicodeScalars
            guard let first = scalars.firstIndex(where: { $0 != " " }),
                let last = scalars.lastIndex(where: { $0 != " " })
            else { return .string("") }
            return .string(String(scalars[first...last]))
        }
    }

    /// `text` with every occurrence of `find` replaced, by code point.
    private static func replace(_ find: String, with replacement: String, in text: String) -> String {
        guard !find.unicodeScalars.isEmpty else { return text }
        var result = String.UnicodeScalarView()
        var rest = text.unicodeScalars[...]
        while let range = rest.firstRange(of: find.unicodeScalars) {
            result.append(contentsOf: rest[..<range.lowerBound])
            result.append(contentsOf: replacement.unicodeScalars)
            rest = rest[range.upperBound...]
        }
        result.append(contentsOf: rest)
        return String(result)
    }

    /// The code-point offset of the first occurrence of `pattern` in `text`.
    private static func indexOf(_ pattern: String, in text: String) -> Int? {
        let scalars = text.unicodeScalars
        guard let range = scalars.firstRange(of: pattern.unicodeScalars) else { return nil }
        return scalars.distance(from: scalars.startIndex, to: range.lowerBound)
    }

    private static func substring(_ arguments: [FilterLiteral]) -> FilterLiteral {
        guard (2...3).contains(arguments.count), case .string(let text) = arguments[0],
            let start = integer(arguments[1])
        else { return .null }
        let scalars = Array(text.unicodeScalars)
        let from = Int(clamping: min(max(start, 0), Int64(scalars.count)))
        var to = scalars.count
        if arguments.count == 3 {
            guard let length = integer(arguments[2]) else { return .null }
            to = Int(clamping: min(Int64(from) + min(max(length, 0), Int64(scalars.count)), Int64(scalars.count)))
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[from..<to])
        return .string(String(view))
    }

    /// An integer argument: an integer, or a double with an integral value.
    private static func integer(_ value: FilterLiteral) -> Int64? {
        switch value {
        case .integer(let value): return value
        case .double(let value): return JSONValue.exactInteger(value)
        default: return nil
        }
    }

    private static func dateField(_ function: FilterFunction, _ timestamp: Timestamp) -> Int {
        let parts = timestamp.components
        switch function {
        case .year: return parts.year
        case .month: return parts.month
        case .day: return parts.day
        case .hour: return parts.hour
        case .minute: return parts.minute
        default: return parts.second
        }
    }

    private static func rounding(_ function: FilterFunction, _ value: FilterLiteral) -> FilterLiteral {
        switch value {
        case .integer: return value
        case .double(let number):
            let rule: FloatingPointRoundingRule =
                switch function {
                case .floor: .down
                case .ceiling: .up
                default: .toNearestOrAwayFromZero
                }
            return .double(number.rounded(rule))
        default: return .null
        }
    }
}
