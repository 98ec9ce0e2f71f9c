/// Parses an OData `$filter` text (DESIGN §5) into a ``FilterExpression``.
///
/// ```swift
/// let filter = try FilterParser.parse(
///     "(updatedAt gt datetimeoffset'2024-01-02T03:04:05.123Z') and (complete eq false)")
/// ```
///
/// **Grammar.** Operators `eq ne gt ge lt le`, `and or not`, `add sub mul div mod`, unary `-`, parentheses
/// and `x in (a, b, …)`. Precedence, loosest first: `or`, `and`, comparisons and `in`, `add sub`,
/// `mul div mod`, unary `not` and `-`; binary operators associate to the left (`a sub b sub c` is
/// `(a sub b) sub c`). As in OData, `not` binds tighter than `eq`: write `not (a eq b)`.
///
/// **Literals.** `null`, `true`, `false`; integers (a trailing `L` allowed) become `.integer`, or `.double`
/// when they do not fit in 64 bits; numbers with a fraction, an exponent or an `M`, `D` or `F` suffix become
/// `.double`; `'strings'` with `''` for a quote; `datetime'…'`, `datetimeoffset'…'` and bare ISO 8601
/// date-times (`2024-01-02T03:04:05.123Z`) become `.dateTime`, keeping the text exactly as written (a
/// date-time without a zone is taken as UTC). Bare dates `1994-10-14`, times of day `07:14[:00[.123]]` and guids
/// `29386779-34b1-464a-bb5b-4053c2ee61b3` (OData v4's forms, which Datasync's clients send) become `.date`,
/// `.timeOfDay` and `.guid` (``EdmValueText``), and so do `cast(x, Edm.Date)`, `cast(x, Edm.TimeOfDay)` and
/// `cast(x, Edm.Guid)` of such a literal or of a quoted one. A `-` directly followed by a number is part of the
/// number.
///
/// **Names and case.** OData spells keywords and functions in lowercase, but Azure's servers and
/// clients accept and send other spellings, so operators, `null`/`true`/`false`, function names,
/// literal prefixes and `Edm.DateTimeOffset` are matched in any case. Property names are case-sensitive
/// and are letters, digits and `_`, not starting with a digit. The operator and literal words
/// (`and`, `eq`, `null`, …) are reserved in any case and cannot name a property. A name directly
/// followed by `(` is a function call (whitespace between them is allowed).
///
/// **Functions** and their arguments: `startswith endswith contains indexof concat (s, t)`,
/// `substringof(t, s)`, `substring(s, start[, length])`, `replace(s, find, replacement)`,
/// `length tolower toupper trim (s)`, `year month day hour minute second (date)`, `round floor ceiling (number)`,
/// `isof(x, T)` with a ``FilterTypeName`` `T` (`Edm.String`, `Edm.Boolean`, `Edm.Double`) and
/// `cast(x, Edm.DateTimeOffset)`; type names may be quoted. A wrong number of arguments is an error, and so are
/// the type names and forms this protocol has no meaning for (see ``FilterTypeName``).
///
/// **Limits.** Hostile input cannot exhaust the stack or the memory: the text may be at most
/// ``maximumLength`` characters, and the expression at most ``maximumDepth`` levels deep, counting
/// both the tree and the parentheses. A long chain `a or b or …` is deep too: use `in` for long lists.
///
/// Every failure is a ``FilterParseError`` with the column of the problem; no input makes it crash.
public enum FilterParser {
    /// The longest filter accepted, in Unicode scalars (characters, for ordinary text).
    public static let maximumLength = 65_536

    /// The deepest nesting accepted: of the expression tree and of parentheses.
    public static let maximumDepth = 100

    /// Parses `text` as a whole `$filter` expression. Throws ``FilterParseError``.
    public static func parse(_ text: String) throws -> FilterExpression {
        let scalars = Array(text.unicodeScalars.prefix(maximumLength + 1))
        guard scalars.count <= maximumLength else {
            throw FilterParseError(
                column: maximumLength + 1, reason: "the filter is longer than \(maximumLength) characters")
        }
        var parser = Parser(tokens: try FilterLexer.tokens(scalars))
        return try parser.parseFilter()
    }
}

/// A recursive-descent parser over the lexer's tokens. Every parse function returns the tree together
/// with its depth, so the depth limit is checked while building, before anything recurses over the tree.
private struct Parser {
    struct Node {
        let expression: FilterExpression
        let depth: Int
    }

    private let tokens: [FilterToken]
    private var position = 0
    /// How many parentheses, argument lists and unary operators enclose the current point.
    private var nesting = 0

    /// Words that are operators or literals in any case, so they are never taken for property names.
    private static let reservedWords: Set<String> = Set(FilterBinaryOperator.allCases.map(\.rawValue))
        .union(["not", "in", "null", "true", "false"])

    init(tokens: [FilterToken]) { self.tokens = tokens }

    mutating func parseFilter() throws(FilterParseError) -> FilterExpression {
        let node = try parseBinary(.or)
        guard current.kind == .end else {
            if current.kind == .closeParenthesis {
                throw error(at: current, "unexpected ')' without a matching '('")
            }
            throw error(at: current, "expected an operator such as eq, and or add, found \(describe(current))")
        }
        return node.expression
    }

    // MARK: - Operators

    /// Parses a left-associative chain of the binary operators of `level`, whose operands bind tighter.
    private mutating func parseBinary(_ level: FilterPrecedence) throws(FilterParseError) -> Node {
        guard level < .unary else { return try parseUnary() }
        var left = try parseBinary(level.tighter)
        while case .word(let word) = current.kind {
            let lowered = word.lowercased()
            let token = current
            if let op = FilterBinaryOperator(rawValue: lowered), op.precedence == level {
                advance()
                let right = try parseBinary(level.tighter)
                left = try node(.binary(op, left.expression, right.expression), [left, right], at: token)
            } else if level == .comparison, lowered == "in" {
                advance()
                left = try parseInList(left, at: token)
            } else {
                break
            }
        }
        return left
    }

    private mutating func parseInList(_ left: Node, at inToken: FilterToken) throws(FilterParseError) -> Node {
        guard take(.openParenthesis) else {
            throw error(at: current, "expected '(' and a list of values after 'in', found \(describe(current))")
        }
        guard current.kind != .closeParenthesis else { throw error(at: current, "the list after 'in' is empty") }
        try enterNesting(at: inToken)
        defer { nesting -= 1 }
        var items: [Node] = []
        repeat {
            items.append(try parseBinary(.or))
        } while take(.comma)
        guard take(.closeParenthesis) else {
            throw error(at: current, "expected ',' or ')' in the list after 'in', found \(describe(current))")
        }
        return try node(.in(left.expression, items.map(\.expression)), [left] + items, at: inToken)
    }

    private mutating func parseUnary() throws(FilterParseError) -> Node {
        let token = current
        let op: FilterUnaryOperator
        switch token.kind {
        case .word(let word) where word.lowercased() == "not":
            op = .not
        case .minus:
            if case .number(let digits, let isDecimal) = next.kind, next.column == token.column + 1 {
                advance()
                advance()
                return Node(
                    expression: .literal(try number(digits, isDecimal: isDecimal, negative: true, at: token)),
                    depth: 1)
            }
            op = .negate
        default:
            return try parsePrimary()
        }
        advance()
        try enterNesting(at: token)
        defer { nesting -= 1 }
        let operand = try parseUnary()
        return try node(.unary(op, operand.expression), [operand], at: token)
    }

    // MARK: - Operands

    private mutating func parsePrimary() throws(FilterParseError) -> Node {
        let token = current
        switch token.kind {
        case .openParenthesis:
            advance()
            try enterNesting(at: token)
            defer { nesting -= 1 }
            let inner = try parseBinary(.or)
            guard take(.closeParenthesis) else {
                throw error(
                    at: current, "expected ')' to close the '(' at column \(token.column), found \(describe(current))")
            }
            return inner
        case .number(let digits, let isDecimal):
            advance()
            return Node(
                expression: .literal(try number(digits, isDecimal: isDecimal, negative: false, at: token)), depth: 1)
        case .string(let text):
            advance()
            return Node(expression: .literal(.string(text)), depth: 1)
        case .dateTime(let timestamp):
            advance()
            return Node(expression: .literal(.dateTime(timestamp)), depth: 1)
        case .date(let text):
            advance()
            return Node(expression: .literal(.date(text)), depth: 1)
        case .timeOfDay(let text):
            advance()
            return Node(expression: .literal(.timeOfDay(text)), depth: 1)
        case .guid(let text):
            advance()
            return Node(expression: .literal(.guid(text)), depth: 1)
        case .word(let word):
            advance()
            if current.kind == .openParenthesis { return try parseFunction(word, at: token) }
            if current.kind == .dot, word.lowercased() == "geo" {
                // Refused by name rather than as a property followed by a stray dot.
                throw error(at: token, FilterParseError.noGeography)
            }
            switch word.lowercased() {
            case "null": return Node(expression: .literal(.null), depth: 1)
            case "true": return Node(expression: .literal(.bool(true)), depth: 1)
            case "false": return Node(expression: .literal(.bool(false)), depth: 1)
            case let lowered where Self.reservedWords.contains(lowered):
                throw error(at: token, "expected a value, a property or a function, found the operator '\(word)'")
            default: return Node(expression: .property(word), depth: 1)
            }
        case .closeParenthesis, .comma, .minus, .dot, .end:
            throw error(at: token, "expected a value, a property or a function, found \(describe(token))")
        }
    }

    /// Parses the arguments of a call; `current` is the `(` after the name.
    private mutating func parseFunction(_ name: String, at token: FilterToken) throws(FilterParseError) -> Node {
        guard let function = FilterFunction(rawValue: name.lowercased()) else {
            throw error(at: token, "unknown function '\(name)'")
        }
        advance()
        try enterNesting(at: token)
        defer { nesting -= 1 }
        if function == .castDateTimeOffset || function == .isof { return try parseTypeArguments(function, at: token) }
        var arguments: [Node] = []
        if current.kind != .closeParenthesis {
            repeat {
                arguments.append(try parseBinary(.or))
            } while take(.comma)
        }
        guard take(.closeParenthesis) else {
            throw error(
                at: current, "expected ')' after the arguments of \(function.rawValue), found \(describe(current))")
        }
        let arity = Self.arity(of: function)
        guard arity.contains(arguments.count) else {
            throw error(at: token, "\(function.rawValue) takes \(Self.describe(arity)), found \(arguments.count)")
        }
        return try node(.function(function, arguments.map(\.expression)), arguments, at: token)
    }

    /// `cast(x, Edm.DateTimeOffset)` or `isof(x, T)`, the type name bare or quoted; `current` follows the `(`.
    /// `isof` keeps its type as a string literal in its canonical spelling, so the tree says which type.
    private mutating func parseTypeArguments(
        _ function: FilterFunction, at token: FilterToken
    ) throws(FilterParseError) -> Node {
        let expected = function == .isof ? "a type such as Edm.String" : "Edm.DateTimeOffset"
        let value = try parseBinary(.or)
        guard take(.comma) else {
            let usage =
                function == .isof
                ? """
                ; isof takes a value and a type, as in isof(text, Edm.String) (isof(type) tests the type of the \
                record itself, which records of a table do not differ in)
                """
                : ""
            throw error(
                at: current,
                """
                expected ',' and \(expected) after the value in \(function.rawValue), \
                found \(describe(current))\(usage)
                """
            )
        }
        let typeToken = current
        let typeName = readTypeName()
        var arguments = [value.expression]
        if function == .isof {
            arguments.append(.literal(.string(try isofType(typeName, at: typeToken).rawValue)))
        } else if typeName?.lowercased() != "edm.datetimeoffset" {
            return try castOfLiteral(value.expression, to: typeName, at: typeToken, call: token)
        }
        guard take(.closeParenthesis) else {
            throw error(
                at: current, "expected ')' after the arguments of \(function.rawValue), found \(describe(current))")
        }
        return try node(.function(function, arguments), [value], at: token)
    }

    /// The type `typeName` (read at `token`) that `isof` tests for.
    private func isofType(_ typeName: String?, at token: FilterToken) throws(FilterParseError) -> FilterTypeName {
        guard let type = typeName.flatMap(FilterTypeName.init(named:)) else {
            throw error(
                at: token,
                """
                isof supports \(FilterTypeName.allCases.map(\.rawValue).joined(separator: ", ")) (the types a JSON \
                value has), found \(typeName.map { "'\($0)'" } ?? describe(token))
                """
            )
        }
        return type
    }

    /// `cast(value, typeName)` to a literal type (read at `typeToken`; the call at `call`), up to its closing
    /// parenthesis: the literal itself, for the tree keeps no cast of it.
    private mutating func castOfLiteral(
        _ value: FilterExpression, to typeName: String?, at typeToken: FilterToken, call: FilterToken
    ) throws(FilterParseError) -> Node {
        guard let cast = typeName.flatMap({ Self.literalCast($0.lowercased()) }) else {
            throw error(
                at: typeToken,
                """
                cast supports Edm.DateTimeOffset, Edm.Date, Edm.TimeOfDay and Edm.Guid, found \
                \(typeName.map { "'\($0)'" } ?? describe(typeToken))
                """
            )
        }
        guard take(.closeParenthesis) else {
            throw error(at: current, "expected ')' after the arguments of cast, found \(describe(current))")
        }
        guard let literal = Self.castLiteral(value, cast.read) else {
            throw error(at: call, "cast to \(cast.type) takes a literal of that type, as in \(cast.example)")
        }
        return Node(expression: .literal(literal), depth: 1)
    }

    /// A cast of a literal to its own type (`name` lowercased): the type's spelling, an example, and how a quoted
    /// string is read as one; `nil` for other names.
    private static func literalCast(
        _ name: String
    ) -> (type: String, example: String, read: (String) -> FilterLiteral?)? {
        switch name {
        case "edm.date":
            ("Edm.Date", "cast(1994-10-14, Edm.Date)", { EdmValueText.date($0).map(FilterLiteral.date) })
        case "edm.timeofday":
            (
                "Edm.TimeOfDay", "cast(07:14:00, Edm.TimeOfDay)",
                { EdmValueText.timeOfDay($0).map(FilterLiteral.timeOfDay) }
            )
        case "edm.guid":
            (
                "Edm.Guid", "cast(29386779-34b1-464a-bb5b-4053c2ee61b3, Edm.Guid)",
                { EdmValueText.guid($0).map(FilterLiteral.guid) }
            )
        default: nil
        }
    }

    /// The literal a cast to a literal type gives: the literal itself when it is of the type `read` reads, or a
    /// quoted string that `read` reads; `nil` for anything else.
    private static func castLiteral(
        _ value: FilterExpression, _ read: (String) -> FilterLiteral?
    ) -> FilterLiteral? {
        switch value {
        case .literal(.string(let text)): return read(text)
        case .literal(let literal):
            let text: String
            switch literal {
            case .date(let value), .timeOfDay(let value), .guid(let value): text = value
            default: return nil
            }
            guard let read = read(text), read == literal else { return nil }
            return literal
        default: return nil
        }
    }

    /// A qualified name such as `Edm.DateTimeOffset`, or the same in quotes; `nil` when neither is there.
    private mutating func readTypeName() -> String? {
        if case .string(let text) = current.kind {
            advance()
            return text
        }
        guard case .word(var name) = current.kind else { return nil }
        advance()
        while current.kind == .dot, case .word(let part) = next.kind {
            advance()
            advance()
            name += "." + part
        }
        return name
    }

    /// A numeric literal: an integer when it is written as one and fits in 64 bits, otherwise a double.
    private func number(
        _ digits: String, isDecimal: Bool, negative: Bool, at token: FilterToken
    ) throws(FilterParseError) -> FilterLiteral {
        let text = negative ? "-" + digits : digits
        if !isDecimal, let integer = Int64(text) { return .integer(integer) }
        guard let double = Double(text), double.isFinite else {
            throw error(at: token, "the number \(text) is out of range")
        }
        return .double(double)
    }

    private static func arity(of function: FilterFunction) -> ClosedRange<Int> {
        switch function {
        case .startswith, .endswith, .substringof, .contains, .indexof, .concat, .isof, .castDateTimeOffset:
            return 2...2
        case .substring: return 2...3
        case .replace: return 3...3
        case .length, .tolower, .toupper, .trim, .year, .month, .day, .hour, .minute, .second,
            .round, .floor, .ceiling:
            return 1...1
        }
    }

    private static func describe(_ arity: ClosedRange<Int>) -> String {
        let count = arity.count == 1 ? "\(arity.lowerBound)" : "\(arity.lowerBound) or \(arity.upperBound)"
        return arity.upperBound == 1 ? "1 argument" : "\(count) arguments"
    }

    // MARK: - Tokens, depth and errors

    private var current: FilterToken { tokens[position] }

    /// The token after `current`, or the end token.
    private var next: FilterToken { tokens[min(position + 1, tokens.count - 1)] }

    private mutating func advance() {
        if position < tokens.count - 1 { position += 1 }
    }

    private mutating func take(_ kind: FilterToken.Kind) -> Bool {
        guard current.kind == kind else { return false }
        advance()
        return true
    }

    /// Counts one more level of recursion; refused beyond the limit so that `((((…` cannot exhaust the stack.
    private mutating func enterNesting(at token: FilterToken) throws(FilterParseError) {
        nesting += 1
        guard nesting <= FilterParser.maximumDepth else { throw tooDeep(at: token) }
    }

    /// A new tree node over `children`, refused when it would make the tree deeper than the limit.
    private func node(
        _ expression: FilterExpression, _ children: [Node], at token: FilterToken
    ) throws(FilterParseError) -> Node {
        let depth = 1 + (children.map(\.depth).max() ?? 0)
        guard depth <= FilterParser.maximumDepth else { throw tooDeep(at: token) }
        return Node(expression: expression, depth: depth)
    }

    private func tooDeep(at token: FilterToken) -> FilterParseError {
        error(
            at: token,
            """
            the filter is nested more than \(FilterParser.maximumDepth) levels deep; use 'in' for long lists of \
            alternatives
            """
        )
    }

    private func error(at token: FilterToken, _ reason: String) -> FilterParseError {
        FilterParseError(column: token.column, reason: reason)
    }

    private func describe(_ token: FilterToken) -> String {
        switch token.kind {
        case .word(let word): return "'\(word)'"
        case .number(let digits, _): return "the number \(digits)"
        case .string(let text): return "the string '\(text.count > 20 ? text.prefix(20) + "…" : text)'"
        case .dateTime(let timestamp): return "the date-time \(timestamp.text)"
        case .date(let text): return "the date \(text)"
        case .timeOfDay(let text): return "the time of day \(text)"
        case .guid(let text): return "the guid \(text)"
        case .openParenthesis: return "'('"
        case .closeParenthesis: return "')'"
        case .comma: return "','"
        case .minus: return "'-'"
        case .dot: return "'.'"
        case .end: return "the end of the filter"
        }
    }
}
