/// Prints a ``FilterExpression`` as OData `$filter` text that ``FilterParser`` reads back to an equal tree.
///
/// ```swift
/// let text = FilterPrinter.print(.binary(.gt, .property("updatedAt"), .literal(.dateTime(watermark))))
/// // updatedAt gt datetimeoffset'2024-01-02T03:04:05.1230000+00:00'
/// ```
///
/// - Parentheses only where precedence or left associativity needs them: `a or b and c`, `(a or b) and c`,
///   `a sub (b sub c)`, `not (a eq b)`.
/// - Strings are quoted with `''` for a quote. Date-times print with the ``Timestamp/text`` exactly as parsed,
///   so a watermark goes back to the server precisely as the server wrote it (no precision lost, no zone
///   rewritten), in the form ``DateTimeForm`` names: `datetimeoffset'<text>'` by default, bare for an OData v4
///   server. Dates, times of day and guids print bare (`1994-10-14`).
/// - Doubles print in Swift's shortest round-tripping form and always with a `.` or an exponent (`1.0`,
///   `1e+20`), so they read back as the same double, never as an integer.
///
/// The round trip holds for every tree the parser can produce. A tree built by hand must stay within what
/// the text can say: finite doubles, property names that are words and not reserved, non-empty `in` lists
/// and functions with the right number of arguments.
public enum FilterPrinter {
    /// How a date-time literal is written. Both forms read back to the same ``FilterLiteral/dateTime(_:)``.
    public enum DateTimeForm: Sendable {
        /// `datetimeoffset'2024-01-02T03:04:05.123Z'`: OData v3's form, which the Azure Mobile Apps servers parse.
        case prefixed
        /// `2024-01-02T03:04:05.123Z`: OData v4's form. A Datasync server (ASP.NET Core OData) reads a prefixed
        /// one as a malformed string and refuses the whole `$filter` with 400.
        case bare
    }

    /// The OData text of `expression`, its date-times in `dateTimes` form.
    public static func print(_ expression: FilterExpression, dateTimes: DateTimeForm = .prefixed) -> String {
        let print = { (inner: FilterExpression) in Self.print(inner, dateTimes: dateTimes) }
        let operand = { (inner: FilterExpression, level: FilterPrecedence) in
            inner.precedence >= level ? print(inner) : "(" + print(inner) + ")"
        }
        switch expression {
        case .literal(let literal):
            return Self.print(literal, dateTimes: dateTimes)
        case .property(let name):
            return name
        case .unary(.not, let inner):
            return "not " + operand(inner, .unary)
        case .unary(.negate, let inner):
            // `-5` would read back as the literal -5, not as the negation of 5.
            if case .literal(let literal) = inner, literal.isNumber { return "-(" + Self.print(literal) + ")" }
            return "-" + operand(inner, .unary)
        case .binary(let op, let left, let right):
            return operand(left, op.precedence) + " \(op.rawValue) " + operand(right, op.precedence.tighter)
        case .function(.castDateTimeOffset, let arguments):
            return "cast(" + (arguments.map(print) + ["Edm.DateTimeOffset"]).joined(separator: ", ") + ")"
        case .function(let function, let arguments):
            // isof's type as OData writes it, bare like cast's (the parser reads it quoted too).
            if function == .isof, arguments.count == 2, case .literal(.string(let name)) = arguments[1],
                let type = FilterTypeName(named: name)
            {
                return "isof(" + print(arguments[0]) + ", " + type.rawValue + ")"
            }
            return function.rawValue + "(" + arguments.map(print).joined(separator: ", ") + ")"
        case .in(let value, let items):
            return operand(value, .comparison) + " in (" + items.map(print).joined(separator: ", ") + ")"
        }
    }

    /// The OData text of one literal, a date-time in `dateTimes` form.
    public static func print(_ literal: FilterLiteral, dateTimes: DateTimeForm = .prefixed) -> String {
        switch literal {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let value): return String(value)
        case .double(let value): return value.description
        case .string(let text):
            // By scalar, not by Character: a quote followed by a combining mark is one Character, and would
            // otherwise stay unescaped and end the literal early.
            var quoted = String.UnicodeScalarView()
            for scalar in text.unicodeScalars {
                if scalar == "'" { quoted.append("'") }
                quoted.append(scalar)
            }
            return "'" + String(quoted) + "'"
        case .dateTime(let timestamp):
            switch dateTimes {
            case .prefixed: return "datetimeoffset'" + timestamp.text + "'"
            case .bare: return timestamp.text
            }
        case .date(let text), .timeOfDay(let text), .guid(let text): return text
        }
    }
}

extension FilterLiteral {
    fileprivate var isNumber: Bool {
        switch self {
        case .integer, .double: return true
        case .null, .bool, .string, .dateTime, .date, .timeOfDay, .guid: return false
        }
    }
}
