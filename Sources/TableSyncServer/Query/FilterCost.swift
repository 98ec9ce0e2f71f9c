import SyncProtocol

/// The most a `$filter` may ask of the database, checked before it runs (``FilterCost``). The database evaluates a
/// filter on every row it reads, so its cost is its size times the rows; these bound the first factor, the
/// statement time limit the product.
public struct FilterLimits: Sendable, Hashable {
    /// The deepest nesting of the expression tree (a chain `a and b and c` is as deep as it is long).
    public var maxDepth: Int
    /// The most terms: properties, literals, operators, functions and the items of `in` lists.
    public var maxTerms: Int
    /// The most times longer than what it reads a string function may make a string: `replace` with a replacement of
    /// n characters makes its text up to n times as long, and nested calls multiply.
    public var maxGrowth: Int

    /// Limits of `maxDepth` levels, `maxTerms` terms and `maxGrowth` times a string's length; the defaults are the
    /// server's.
    public init(maxDepth: Int = 32, maxTerms: Int = 500, maxGrowth: Int = 16) {
        self.maxDepth = maxDepth
        self.maxTerms = maxTerms
        self.maxGrowth = maxGrowth
    }
}

/// Measures a `$filter` against ``FilterLimits`` before any database sees it, and refuses one over a limit with a
/// 400 that says what to simplify.
///
/// Growth is counted in lengths of what a string expression reads: a property is one stored value, a literal its
/// length over the filter's own (at most one), `concat` the sum of its parts, `replace` its text times the length
/// of its replacement (each occurrence, of at least one character, may become the replacement), the other string
/// functions what they read. A replacement that is not a literal cannot be bounded and is refused.
enum FilterCost {
    /// What a sub-expression costs.
    struct Measure: Equatable {
        var depth: Int
        var terms: Int
        /// How many times the length of what it reads a string expression may be; 0 for other values.
        var growth: Double
    }

    /// Throws the refusal of `filter` (whose text has `textLength` characters) when it is over one of `limits`.
    static func check(_ filter: FilterExpression, textLength: Int, limits: FilterLimits) throws(ProtocolError) {
        let total = try measure(filter, textLength: max(1, textLength), limits: limits)
        if total.depth > limits.maxDepth {
            throw ProtocolError.badRequest(
                """
                $filter is nested \(total.depth) levels deep, more than this server's limit of \(limits.maxDepth); \
                simplify it, e.g. with in (…) for a long chain of or
                """
            )
        }
        if total.terms > limits.maxTerms {
            throw ProtocolError.badRequest(
                """
                $filter has \(total.terms) terms, more than this server's limit of \(limits.maxTerms); ask with fewer \
                terms, or split the query
                """
            )
        }
    }

    /// The measure of `expression`; throws as soon as a string function grows its text past the limit.
    static func measure(
        _ expression: FilterExpression, textLength: Int, limits: FilterLimits
    ) throws(ProtocolError) -> Measure {
        switch expression {
        case .literal(.string(let text)):
            return Measure(depth: 1, terms: 1, growth: Double(text.unicodeScalars.count) / Double(textLength))
        case .literal:
            return Measure(depth: 1, terms: 1, growth: 0)
        case .property:
            return Measure(depth: 1, terms: 1, growth: 1)
        case .unary(_, let operand):
            return combine([try measure(operand, textLength: textLength, limits: limits)], growth: 0)
        case .binary(_, let left, let right):
            return combine(
                [
                    try measure(left, textLength: textLength, limits: limits),
                    try measure(right, textLength: textLength, limits: limits)
                ], growth: 0)
        case .in(let value, let list):
            var parts = [try measure(value, textLength: textLength, limits: limits)]
            for item in list { parts.append(try measure(item, textLength: textLength, limits: limits)) }
            return combine(parts, growth: 0)
        case .function(let function, let arguments):
            var parts: [Measure] = []
            for argument in arguments { parts.append(try measure(argument, textLength: textLength, limits: limits)) }
            let growth = try growth(of: function, arguments: arguments, parts: parts)
            if growth > Double(limits.maxGrowth) {
                throw ProtocolError.badRequest(
                    """
                    $filter: \(function.rawValue)() can make a string up to \(Int(growth.rounded(.up))) times as long \
                    as what it reads, more than this server's limit of \(limits.maxGrowth); nest fewer replace() calls \
                    or use shorter replacements
                    """
                )
            }
            return combine(parts, growth: growth)
        }
    }

    /// How many times the length of what it reads `function` may make its result.
    private static func growth(
        of function: FilterFunction, arguments: [FilterExpression], parts: [Measure]
    ) throws(ProtocolError) -> Double {
        switch function {
        case .concat:
            return parts.reduce(0) { $0 + $1.growth }
        case .replace:
            guard parts.count == 3 else { return parts.first?.growth ?? 0 }
            guard case .literal(.string(let replacement)) = arguments[2] else {
                throw ProtocolError.badRequest(
                    """
                    $filter: replace() takes its replacement as a literal such as 'x'; one computed or read from the \
                    records can make a string without bound
                    """
                )
            }
            return parts[0].growth * Double(max(1, replacement.unicodeScalars.count))
        case .tolower, .toupper, .trim, .substring, .castDateTimeOffset:
            return parts.first?.growth ?? 0
        case .startswith, .endswith, .substringof, .contains, .indexof, .length, .year, .month, .day, .hour, .minute,
            .second, .round, .floor, .ceiling, .isof:
            return 0
        }
    }

    private static func combine(_ parts: [Measure], growth: Double) -> Measure {
        Measure(
            depth: 1 + (parts.map(\.depth).max() ?? 0), terms: 1 + parts.reduce(0) { $0 + $1.terms }, growth: growth)
    }
}
