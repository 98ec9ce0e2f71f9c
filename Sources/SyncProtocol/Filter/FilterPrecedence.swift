/// OData operator precedence, loosest first. The parser and the printer both read it from here, so the
/// parentheses the printer leaves out are exactly the ones the parser does not need.
///
/// `in` binds like a comparison (`x add 1 in (2, 3)` is `(x add 1) in (2, 3)`), as in the Azure servers;
/// OData 4.01 lists it higher, which would only allow forms that make no sense for the types involved.
enum FilterPrecedence: Int, Comparable {
    case or = 1
    case and, comparison, additive, multiplicative, unary, primary

    static func < (lhs: FilterPrecedence, rhs: FilterPrecedence) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The next tighter level; `.primary` is the tightest.
    var tighter: FilterPrecedence { FilterPrecedence(rawValue: rawValue + 1) ?? .primary }
}

extension FilterBinaryOperator {
    /// Where this operator binds. All binary operators are left-associative.
    var precedence: FilterPrecedence {
        switch self {
        case .or: return .or
        case .and: return .and
        case .eq, .ne, .gt, .ge, .lt, .le: return .comparison
        case .add, .sub: return .additive
        case .mul, .div, .mod: return .multiplicative
        }
    }
}

extension FilterExpression {
    /// How tightly this expression's top operator binds: what decides whether it needs parentheses as an
    /// operand of another operator.
    var precedence: FilterPrecedence {
        switch self {
        case .literal, .property, .function: return .primary
        case .unary: return .unary
        case .binary(let op, _, _): return op.precedence
        case .in: return .comparison
        }
    }
}
