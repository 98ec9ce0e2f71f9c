import TestSupport
@testable import SyncProtocol

/// Short spellings of trees, so that the expected side of a table reads like the filter it stands for.
extension FilterExpression {
    static func p(_ name: String) -> FilterExpression { .property(name) }
    static func int(_ value: Int64) -> FilterExpression { .literal(.integer(value)) }
    static func dbl(_ value: Double) -> FilterExpression { .literal(.double(value)) }
    static func str(_ text: String) -> FilterExpression { .literal(.string(text)) }
    static func bool(_ flag: Bool) -> FilterExpression { .literal(.bool(flag)) }
    static let null = FilterExpression.literal(.null)

    /// A date-time literal; `text` must be valid (a test table typo should fail loudly).
    static func date(_ text: String) -> FilterExpression {
        guard let timestamp = Timestamp(parsing: text) else { preconditionFailure("bad test date \(text)") }
        return .literal(.dateTime(timestamp))
    }

    static func op(_ op: FilterBinaryOperator, _ left: FilterExpression, _ right: FilterExpression) -> FilterExpression
    {
        .binary(op, left, right)
    }

    static func call(_ function: FilterFunction, _ arguments: FilterExpression...) -> FilterExpression {
        .function(function, arguments)
    }
}

/// Random filters for property tests: valid trees for the round trip, and text for the fuzz test.
enum RandomFilter {
    static let propertyNames = ["id", "text", "complete", "updatedAt", "n", "x_1", "_private", "Übung"]

    /// A tree the parser could produce: finite doubles, valid names and arities, non-empty `in` lists.
    static func expression(depth: Int, using rng: inout SeededGenerator) -> FilterExpression {
        guard depth > 0, Int.random(in: 0..<5, using: &rng) > 0 else { return leaf(using: &rng) }
        switch Int.random(in: 0..<10, using: &rng) {
        case 0:
            let op = FilterUnaryOperator.allCases.randomElement(using: &rng)!
            return .unary(op, expression(depth: depth - 1, using: &rng))
        case 1...5:
            let op = FilterBinaryOperator.allCases.randomElement(using: &rng)!
            return .binary(op, expression(depth: depth - 1, using: &rng), expression(depth: depth - 1, using: &rng))
        case 6...8:
            let function = FilterFunction.allCases.randomElement(using: &rng)!
            if function == .isof {
                let type = FilterTypeName.allCases.randomElement(using: &rng)!
                return .function(.isof, [expression(depth: depth - 1, using: &rng), .str(type.rawValue)])
            }
            let count = arity(function, using: &rng)
            return .function(function, (0..<count).map { _ in expression(depth: depth - 1, using: &rng) })
        default:
            let items = (0..<Int.random(in: 1...3, using: &rng)).map { _ in expression(depth: depth - 1, using: &rng) }
            return .in(expression(depth: depth - 1, using: &rng), items)
        }
    }

    private static func arity(_ function: FilterFunction, using rng: inout SeededGenerator) -> Int {
        switch function {
        case .startswith, .endswith, .substringof, .contains, .indexof, .concat: return 2
        case .substring: return Int.random(in: 2...3, using: &rng)
        case .replace: return 3
        default: return 1
        }
    }

    static func leaf(using rng: inout SeededGenerator) -> FilterExpression {
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: return .property(propertyNames.randomElement(using: &rng)!)
        case 1: return .null
        case 2: return .bool(Bool.random(using: &rng))
        case 3: return .int(integer(using: &rng))
        case 4: return .dbl(double(using: &rng))
        case 5: return .str(string(using: &rng))
        case 6: return .literal(.dateTime(timestamp(using: &rng)))
        default: return .property(propertyNames.randomElement(using: &rng)!)
        }
    }

    static func integer(using rng: inout SeededGenerator) -> Int64 {
        [
            Int64.min, .max, 0, -1, 1, Int64.random(in: -1000...1000, using: &rng),
            Int64.random(in: .min ... .max, using: &rng)
        ]
        .randomElement(using: &rng)!
    }

    static func double(using rng: inout SeededGenerator) -> Double {
        let candidates: [Double] = [
            0, -0.0, 1, -1.5, 0.1, 1e20, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.leastNormalMagnitude,
            Double.random(in: -1e6...1e6, using: &rng),
            Double(bitPattern: rng.next())
        ]
        let value = candidates.randomElement(using: &rng)!
        return value.isFinite ? value : 2.5
    }

    static func string(using rng: inout SeededGenerator) -> String {
        let pieces = ["a", "B", " ", "'", "''", "é", "e\u{301}", "ß", "😀", "\u{0}", "\n", ")", "eq", "\\", "%"]
        return (0..<Int.random(in: 0...5, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    static func timestamp(using rng: inout SeededGenerator) -> Timestamp {
        let texts = [
            "2024-01-02T03:04:05.1230000+00:00", "2024-01-02T03:04:05Z", "1999-12-31T23:59:59.9999999-08:00",
            "2024-02-29T00:00:00.000Z", "2024-01-02T03:04+05:30"
        ]
        if Bool.random(using: &rng), let parsed = Timestamp(parsing: texts.randomElement(using: &rng)!) {
            return parsed
        }
        return Timestamp(ticks: Int64.random(in: -100_000_000_000_000_000...100_000_000_000_000_000, using: &rng))
    }

    /// Filter-shaped text that is usually wrong: tokens of the language glued together at random.
    static func tokenSoup(using rng: inout SeededGenerator) -> String {
        let vocabulary = [
            "(", ")", ",", "-", ".", "'a'", "'it''s'", "'", "eq", "NE", "and", "or", "not", "add", "mul", "in",
            "x", "Text", "1", "1.5", "2.5e3", "1e400", "-9223372036854775808", "9223372036854775808", "1M", "2L",
            "datetimeoffset'2024-01-02T03:04:05Z'", "2024-01-02T03:04:05.123Z", "datetime'bad'", "guid'x'",
            "startswith", "substring", "cast", "Edm.DateTimeOffset", "length", "null", "true", "$", "é", "=", " "
        ]
        let count = Int.random(in: 0...12, using: &rng)
        return (0..<count).map { _ in
            vocabulary.randomElement(using: &rng)! + (Bool.random(using: &rng) ? " " : "")
        }.joined()
    }
}
