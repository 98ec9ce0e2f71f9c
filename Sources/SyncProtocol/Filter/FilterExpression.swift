/// An OData `$filter` expression as a tree: what ``FilterParser`` produces, ``FilterPrinter`` prints back,
/// ``FilterEvaluator`` evaluates against a record locally, and the server translates to parameterised SQL.
///
/// `cast(x, Edm.DateTimeOffset)` parses to `.function(.castDateTimeOffset, [x])` and `isof(x, Edm.String)` to
/// `.function(.isof, [x, .literal(.string("Edm.String"))])` (the type's ``FilterTypeName`` spelling); the literal
/// forms `datetime'…'`, `datetimeoffset'…'` and bare v4 ISO dates all parse to `.literal(.dateTime(…))`. The casts to
/// `Edm.Date`, `Edm.TimeOfDay` and `Edm.Guid` take a literal and parse to it: `cast(1994-10-14, Edm.Date)` is
/// `.literal(.date("1994-10-14"))`, as the bare `1994-10-14` is.
public indirect enum FilterExpression: Sendable, Hashable {
    /// A constant.
    case literal(FilterLiteral)
    /// A record property by name (`text`, `updatedAt`).
    case property(String)
    /// `not x` or `-x`.
    case unary(FilterUnaryOperator, FilterExpression)
    /// `x op y` for comparison, logical and arithmetic operators.
    case binary(FilterBinaryOperator, FilterExpression, FilterExpression)
    /// A function call such as `startswith(text, 'a')`.
    case function(FilterFunction, [FilterExpression])
    /// `x in (a, b, c)`.
    case `in`(FilterExpression, [FilterExpression])
}

/// A constant in a `$filter` expression.
public enum FilterLiteral: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    /// `datetime'…'`, `datetimeoffset'…'` or a bare ISO 8601 date-time.
    case dateTime(Timestamp)
    /// `cast(1994-10-14, Edm.Date)` or a bare `1994-10-14`: a date without a time, as ``EdmValueText/date(_:)``
    /// writes it.
    case date(String)
    /// `cast(07:14:00, Edm.TimeOfDay)` or a bare `07:14:00`, as ``EdmValueText/timeOfDay(_:)`` writes it.
    case timeOfDay(String)
    /// `cast(<guid>, Edm.Guid)` or a bare guid, in lowercase (``EdmValueText/guid(_:)``).
    case guid(String)
}

/// The unary operators of `$filter`.
public enum FilterUnaryOperator: String, Sendable, Hashable, CaseIterable {
    case not
    case negate = "-"
}

/// The binary operators of `$filter`, spelled as in OData.
public enum FilterBinaryOperator: String, Sendable, Hashable, CaseIterable {
    case eq, ne, gt, ge, lt, le
    case and, or
    case add, sub, mul, div, mod
}

/// The functions of `$filter`: OData v3's canonical functions plus v4's `contains`, spelled as in OData.
public enum FilterFunction: String, Sendable, Hashable, CaseIterable {
    case startswith, endswith, substringof, contains, indexof, length
    case tolower, toupper, trim, concat, substring, replace
    case year, month, day, hour, minute, second
    case round, floor, ceiling
    /// `isof(x, T)`: whether `x` holds a value of the JSON type that ``FilterTypeName`` `T` names.
    case isof
    /// `cast(x, Edm.DateTimeOffset)`.
    case castDateTimeOffset = "cast"
}

extension FilterExpression {
    /// Every property the expression names, in the order they appear, with repeats.
    public var propertyNames: [String] {
        switch self {
        case .literal: []
        case .property(let name): [name]
        case .unary(_, let operand): operand.propertyNames
        case .binary(_, let left, let right): left.propertyNames + right.propertyNames
        case .function(_, let arguments): arguments.flatMap(\.propertyNames)
        case .in(let value, let list): value.propertyNames + list.flatMap(\.propertyNames)
        }
    }

    /// The expression with every property name replaced by what `rename` makes of it, e.g. a declared column's own
    /// spelling for a name a client wrote in another case.
    public func renamingProperties(_ rename: (String) -> String) -> FilterExpression {
        switch self {
        case .literal: self
        case .property(let name): .property(rename(name))
        case .unary(let op, let operand): .unary(op, operand.renamingProperties(rename))
        case .binary(let op, let left, let right):
            .binary(op, left.renamingProperties(rename), right.renamingProperties(rename))
        case .function(let function, let arguments):
            .function(function, arguments.map { $0.renamingProperties(rename) })
        case .in(let value, let list):
            .in(value.renamingProperties(rename), list.map { $0.renamingProperties(rename) })
        }
    }
}
