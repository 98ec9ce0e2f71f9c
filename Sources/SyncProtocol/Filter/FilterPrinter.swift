/// Prints a ``FilterExpression`` as OData `$filter` text that ``FilterParser`` reads back to an equal tree.
///
/// ```swift
/// let text = FilterPrinter.print(.binary(.gt, .property("updatedAt"), .literal(.dateTime(watermark))))
/// // updatedAt gt datetimeoffset'2024-01-02T03:04:05.1230000+00:00'
/// ```
///
/// - Parentheses only where precedence or left associativity needs them: `a or b and c`, `(a or b) and c`,
///   `a sub (b sub c)`, `not (a eq b)`.
/// - Strings are quoted with `''` for a quote. Date-times print as `datetimeoffset'<text>'` with the
///   ``Timestamp/text`` exactly as parsed, so a watermark goes back to the server precisely as the server
///   wrote it (no precision lost, no zone rewritten). Dates, times of day and guids print bare (`1994-10-14`).
/// - Doubles print in Swift's shortest round-tripping form and always with a `.` or an exponent (`1.0`,
///   `1e+20`), so they read back as the same double, never as an integer.
///
/// The round trip holds for every tree the parser can produce. A tree built by hand must stay within what
/// the text can say: finite doubles, property names that are words and not reserved, non-empty `in` lists
/// and functions with the right number of arguments.
public enum FilterPrinter {
    /// The OData text of `expression`.
    public static func print(_ expression: FilterExpression) -> String {
        switch expression {
        case .literal(let literal):
            return print(literal)
        case .property(let name):
            return name
        case .unary(.not, let operand):
            return "not " + printOperand(operand, atLeast: .unary)
        case .unary(.negate, let operand):
            // `-5` would read back as the literal -5, not as the negation of 5.
            if case .literal(let literal) = operand, literal.isNumber { return "-(" + print(literal) + ")" }
            return "-" + printOperand(operand, atLeast: .unary)
        case .binary(let op, let left, let right):
            return printOperand(left, atLeast: op.precedence) + " \(op.rawValue) "
                + printOperand(right, atLeast: op.precedence.tighter)
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
            return printOperand(value, atLeast: .comparison) + " in (" + items.map(print).joined(separator: ", ") + ")"
        }
    }

    /// The OData text of one literal.
    public static func print(_ literal: FilterLiteral) -> String {
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
        case .dateTime(let timestamp): return "datetimeoffset'" + timestamp.text + "'"
        case .date(let text), .timeOfDay(let text), .guid(let text): return text
        }
    }

    /// `expression` as the operand of an operator that needs it to bind at least as tightly as `level`.
    private static func printOperand(_ expression: FilterExpression, atLeast level: FilterPrecedence) -> String {
        expression.precedence >= level ? print(expression) : "(" + print(expression) + ")"
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
