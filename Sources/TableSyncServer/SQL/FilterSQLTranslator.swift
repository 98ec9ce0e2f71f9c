import SyncProtocol

/// Why a `$filter` tree has no SQL translation, in words a client can act on.
package struct FilterTranslationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong ("cannot compare a string with a number").
    package let reason: String

    package init(_ reason: String) { self.reason = reason }

    package var description: String { reason }
}

/// Translates a `$filter` tree into a parameterised SQL condition, as a pure function.
///
/// Values are always bound, never spliced; system properties map to fixed columns and every other property
/// is read from the JSON body with its name as a bound parameter (`json_extract(body, ?)` in SQLite,
/// `body -> $n` in PostgreSQL), after the name is checked to be a plain identifier.
///
/// The semantics follow ``FilterEvaluator`` (the local reference): comparisons are never NULL (an ordering
/// comparison with a missing property or a property of another JSON type is `false`; `eq`/`ne` are SQL's
/// `IS`/`IS NOT DISTINCT FROM`, so two nulls are equal), while `and`, `or`, `not`, bare boolean properties and
/// string functions keep SQL's three-valued logic, as the evaluator does. Strings compare by code point
/// (`COLLATE "C"` in PostgreSQL). Dates compare by instant for `createdAt`/`updatedAt` (exact ticks); a date
/// string in another property compares with a date literal as canonical text (`yyyy-MM-ddTHH:mm:ss.fffZ`), which
/// is exact for strings written in that form. Date, time-of-day and guid literals compare with the strings that hold
/// a value of their kind, as ``EdmValueText`` reads them. Known differences, documented in docs/server.md: SQLite's
/// `lower`/`upper` map ASCII only; PostgreSQL divides body numbers as doubles (`7 div 2` is 3.5, not 3).
///
/// For a table with declared columns (`schema`), a property is its column's typed expression
/// (``DeclaredColumnSQL``), the one its index is built on, and a comparison with a value is written so that the
/// index can serve it (`x > ? AND x IS NOT NULL` rather than `COALESCE(x > ?, FALSE)`, the same rows). Stored
/// dates are canonical text, so they compare with a date literal as text, exactly: the literal is rounded to the
/// millisecond in the direction that keeps the answer (``storedDateBound(_:_:)``). A property that is not declared
/// is refused.
///
/// ```swift
/// var builder = SQLBuilder(dialect: .postgres)
/// let condition = try FilterSQLTranslator.translate(.binary(.eq, .property("text"), .literal(.string("a"))),
///                                                   into: &builder)
/// ```
package enum FilterSQLTranslator {
    /// The SQL condition for `expression` over a table with the declared columns `schema` (`nil`: schemaless),
    /// binding its values into `builder`. The condition is never NULL.
    package static func translate(
        _ expression: FilterExpression, schema: TableSchema? = nil, into builder: inout SQLBuilder
    ) throws(FilterTranslationError) -> String {
        try translate(expression, schema: schema, properties: nil, into: &builder)
    }

    /// The condition for `expression`, reading body properties from the columns of `properties` when given
    /// (``ExtractedProperties``), from `body` otherwise.
    static func translate(
        _ expression: FilterExpression, schema: TableSchema?, properties: ExtractedProperties?,
        into builder: inout SQLBuilder
    ) throws(FilterTranslationError) -> String {
        var translation = Translation(builder: builder, schema: schema, properties: properties)
        let condition = try translation.predicate(expression)
        builder = translation.builder
        return condition
    }

    /// The condition for `expression` on its own, with placeholders numbered from 1: for tests and logs.
    package static func translate(
        _ expression: FilterExpression, schema: TableSchema? = nil, dialect: SQLDialect
    ) throws(FilterTranslationError) -> SQLStatement {
        var builder = SQLBuilder(dialect: dialect)
        let condition = try translate(expression, schema: schema, into: &builder)
        return builder.statement(condition)
    }

    /// The SQL of a JSON body property for ordering, binding its name into `builder`; read from its column of
    /// `properties` when it is one of them.
    static func orderingExpression(
        forProperty name: String, properties: ExtractedProperties? = nil, into builder: inout SQLBuilder
    ) -> String {
        if let index = properties?.index(of: name) {
            return "(\(ExtractedProperties.valueColumn(index)))"
        }
        switch builder.dialect {
        case .sqlite: return "json_extract(\(RecordColumns.body), \(builder.bind(.text(jsonPath(name)))))"
        case .postgres: return "(\(RecordColumns.body) -> \(builder.bind(.text(name))))"
        }
    }

    static func jsonPath(_ name: String) -> String { "$.\"\(name)\"" }

    /// How a stored date (canonical text, whole milliseconds) compares with the date literal `instant` under `op`
    /// (`eq gt ge lt le`): the operator and the canonical text to compare with, or `nil` when no stored date can
    /// match (`eq` with an instant between two milliseconds). A literal between milliseconds is rounded down for `gt`
    /// and `le`, up for `ge` and `lt`, which selects the same whole milliseconds as comparing instants does.
    static func storedDateBound(_ op: FilterBinaryOperator, _ instant: Timestamp) -> (operator: String, text: String)? {
        let remainder = (instant.ticks % 10_000 + 10_000) % 10_000
        let down = Timestamp(ticks: instant.ticks - remainder).text
        let up = Timestamp(ticks: instant.ticks - remainder + (remainder == 0 ? 0 : 10_000)).text
        switch op {
        case .eq: return remainder == 0 ? ("=", down) : nil
        case .gt: return (">", down)
        case .ge: return (">=", up)
        case .lt: return ("<", up)
        case .le: return ("<=", down)
        default: return nil
        }
    }
}

/// The SQL types an operand can have.
private enum OperandKind: String {
    case text = "a string"
    case number = "a number"
    case boolean = "a boolean"
    /// A date as 100-ns ticks (system date columns and date literals).
    case ticks = "a date"
    /// A property of the JSON body, whose type is known only per row.
    case json = "a property"
    /// A declared date column: canonical text (`yyyy-MM-ddTHH:mm:ss.fffZ`), or NULL.
    case storedDate = "a date property"
    /// A date literal without a time (`1994-10-14`), bound as its text.
    case dateOnly = "a date without a time"
    /// A time-of-day literal (`07:14:00`), bound as its text.
    case timeOfDay = "a time of day"
    /// A guid literal, bound as its lowercase text.
    case guid = "a guid"
    case null = "null"

    /// The kinds of ``EdmValueText``'s literals, which compare with strings that hold a value of their kind.
    var isEdmLiteral: Bool { self == .dateOnly || self == .timeOfDay || self == .guid }
}

private struct Operand {
    var sql: String
    var kind: OperandKind
    /// The property name when `kind` is `.json`.
    var property: String? = nil
    /// The literal when the operand is a date literal (so it can also be compared as canonical text).
    var dateLiteral: Timestamp? = nil
    /// The text of a date, time-of-day or guid literal (``OperandKind/isEdmLiteral``).
    var edmText: String? = nil
    /// `true` for a `NOT NULL` column or a bound value that is not null: a comparison of two such operands is
    /// never NULL, so it needs neither `COALESCE` nor `IS`, and the database can use an index for it.
    var neverNull = false
    /// `true` for a declared column: `sql` is the expression its index is built on.
    var declared = false
    /// `true` for a declared `dateonly` column: text that is always `yyyy-MM-dd` or NULL.
    var holdsDates = false
}

private struct Translation {
    var builder: SQLBuilder
    let schema: TableSchema?
    let properties: ExtractedProperties?
    var dialect: SQLDialect { builder.dialect }

    // MARK: Body properties

    /// SQLite: the JSON type of body property `name` (`json_type`'s names; NULL or `null` when missing).
    mutating func sqliteType(_ name: String) -> String {
        if let index = properties?.index(of: name) { return ExtractedProperties.typeColumn(index) }
        return "json_type(\(RecordColumns.body), \(builder.bind(.text(FilterSQLTranslator.jsonPath(name)))))"
    }

    /// SQLite: the value of body property `name` as `json_extract` gives it.
    mutating func sqliteValue(_ name: String) -> String {
        if let index = properties?.index(of: name) { return ExtractedProperties.valueColumn(index) }
        return "json_extract(\(RecordColumns.body), \(builder.bind(.text(FilterSQLTranslator.jsonPath(name)))))"
    }

    /// PostgreSQL: body property `name` as `jsonb` (`body -> key`) and as text (`body ->> key`), binding its key
    /// once.
    mutating func postgresValue(_ name: String) -> (json: String, text: String) {
        if let index = properties?.index(of: name) {
            let column = ExtractedProperties.valueColumn(index)
            return (column, "\(column) #>> '{}'")
        }
        let key = builder.bind(.text(name))
        return ("\(RecordColumns.body) -> \(key)", "\(RecordColumns.body) ->> \(key)")
    }

    // MARK: Conditions

    mutating func predicate(_ expression: FilterExpression) throws(FilterTranslationError) -> String {
        switch expression {
        case .binary(let op, let lhs, let rhs):
            switch op {
            case .and: return "(\(try predicate(lhs)) AND \(try predicate(rhs)))"
            case .or:
                if let cursor = try keysetCursor(lhs, rhs) { return cursor }
                return "(\(try predicate(lhs)) OR \(try predicate(rhs)))"
            case .eq, .ne, .gt, .ge, .lt, .le: return try comparison(op, lhs, rhs)
            case .add, .sub, .mul, .div, .mod:
                throw FilterTranslationError("an arithmetic expression ('\(op.rawValue)') is not a condition")
            }
        case .unary(.not, let inner):
            return "(NOT \(try predicate(inner)))"
        case .in(let subject, let candidates):
            return try membership(subject, candidates)
        case .function(let function, let arguments) where Self.predicateFunctions.contains(function):
            return try stringPredicate(function, arguments)
        default:
            // A bare boolean is a condition; NULL (missing or not a boolean) is unknown, as in the evaluator.
            return try typed(try operand(expression), as: .boolean)
        }
    }

    static let predicateFunctions: Set<FilterFunction> = [.startswith, .endswith, .substringof, .contains]

    mutating func comparison(
        _ op: FilterBinaryOperator, _ lhs: FilterExpression, _ rhs: FilterExpression
    ) throws(FilterTranslationError) -> String {
        let left = try operand(lhs)
        let right = try operand(rhs)
        if left.kind == .null || right.kind == .null {
            let other = left.kind == .null ? right : left
            switch op {
            case .eq: return isNull(other)
            case .ne: return "(NOT \(isNull(other)))"
            default: return "FALSE"
            }
        }
        if let comparison = try edmComparison(op, left, right) { return comparison }
        if let comparison = try storedDateComparison(op, left, right) { return comparison }
        let (leftSQL, rightSQL, kind) = try unify(left, right)
        return try compared(op, left, leftSQL, right, rightSQL, asText: kind == .text)
    }

    /// `leftSQL op rightSQL`, the SQL of `left` and `right` as they are to be compared (as text when `asText`), in
    /// the cheapest form their nullability allows: plain where neither can be NULL or a declared column meets a value
    /// that cannot (so that its index serves it), `IS` for equality otherwise, and FALSE where an order meets NULL.
    func compared(
        _ op: FilterBinaryOperator, _ left: Operand, _ leftSQL: String, _ right: Operand, _ rightSQL: String,
        asText: Bool
    ) throws(FilterTranslationError) -> String {
        let sqlOperator: String
        switch op {
        case .eq: sqlOperator = dialect == .sqlite ? "IS" : "IS NOT DISTINCT FROM"
        case .ne: sqlOperator = dialect == .sqlite ? "IS NOT" : "IS DISTINCT FROM"
        case .gt: sqlOperator = ">"
        case .ge: sqlOperator = ">="
        case .lt: sqlOperator = "<"
        case .le: sqlOperator = "<="
        default: throw FilterTranslationError("'\(op.rawValue)' is not a comparison")
        }
        // PostgreSQL compares text by the database's collation; "C" makes it code point order, as everywhere else.
        let collate = dialect == .postgres && asText ? " COLLATE \"C\"" : ""
        let plainOperator = op == .eq ? "=" : op == .ne ? "<>" : sqlOperator
        if left.neverNull && right.neverNull {
            return "(\(leftSQL)\(collate) \(plainOperator) \(rightSQL))"
        }
        if op != .ne, left.declared && right.neverNull || right.declared && left.neverNull {
            // NULL AND FALSE is FALSE: never NULL, and the plain comparison lets the column's index serve it.
            let column = left.declared ? leftSQL : rightSQL
            return "(\(leftSQL)\(collate) \(plainOperator) \(rightSQL) AND \(column) IS NOT NULL)"
        }
        if op == .eq || op == .ne {
            return "(\(leftSQL) \(sqlOperator) \(rightSQL))"
        }
        return "COALESCE(\(leftSQL)\(collate) \(sqlOperator) \(rightSQL), FALSE)"
    }

    /// A date, time-of-day or guid literal compared (in either order) with one of its kind or with a string that
    /// holds one, as ``EdmValueText`` reads it and as the evaluator compares them; `nil` when neither operand is
    /// such a literal. A date compares with `createdAt`/`updatedAt` by their UTC day, as a range of ticks.
    mutating func edmComparison(
        _ op: FilterBinaryOperator, _ left: Operand, _ right: Operand
    ) throws(FilterTranslationError) -> String? {
        let literalOnLeft = left.kind.isEdmLiteral
        guard literalOnLeft || right.kind.isEdmLiteral else { return nil }
        let (literal, other) = literalOnLeft ? (left, right) : (right, left)
        var shaped = other
        switch other.kind {
        case literal.kind:
            break
        case .text where other.holdsDates && literal.kind == .dateOnly:
            // The column's own expression, compared as it is, so that its index serves the comparison.
            break
        case .ticks where literal.kind == .dateOnly && other.dateLiteral == nil:
            let mirrored: [FilterBinaryOperator: FilterBinaryOperator] = [.gt: .lt, .ge: .le, .lt: .gt, .le: .ge]
            return try dayComparison(literalOnLeft ? mirrored[op] ?? op : op, column: other.sql, literal: literal)
        case .json, .text, .storedDate:
            shaped = Operand(sql: edmShaped(literal.kind, try typed(other, as: .text)), kind: literal.kind)
        default:
            throw FilterTranslationError("cannot compare \(literal.kind.rawValue) with \(other.kind.rawValue)")
        }
        let (leftOperand, rightOperand) = literalOnLeft ? (literal, shaped) : (shaped, literal)
        return try compared(op, leftOperand, leftOperand.sql, rightOperand, rightOperand.sql, asText: true)
    }

    /// A system date column (ticks) against a date without a time, `column op date`: the day's range of ticks in
    /// UTC, which is what the date part of the column's text (always written in UTC) compares as.
    mutating func dayComparison(
        _ op: FilterBinaryOperator, column: String, literal: Operand
    ) throws(FilterTranslationError) -> String {
        guard let day = literal.edmText, let midnight = Timestamp(parsing: day + "T00:00:00Z") else {
            throw FilterTranslationError("cannot compare \(literal.kind.rawValue) with createdAt or updatedAt")
        }
        let start = builder.bind(.integer(midnight.ticks))
        let end = builder.bind(.integer(midnight.ticks + 24 * 3600 * Timestamp.ticksPerSecond))
        switch op {
        case .eq: return "(\(column) >= \(start) AND \(column) < \(end))"
        case .ne: return "(\(column) < \(start) OR \(column) >= \(end))"
        case .gt: return "(\(column) >= \(end))"
        case .ge: return "(\(column) >= \(start))"
        case .lt: return "(\(column) < \(start))"
        case .le: return "(\(column) < \(end))"
        default: throw FilterTranslationError("'\(op.rawValue)' is not a comparison")
        }
    }

    /// The value of kind `kind` (``OperandKind/isEdmLiteral``) that the text `text` holds, as ``EdmValueText`` reads
    /// it, or NULL: the date part of a date or date-time, a time of day, a guid in lowercase.
    func edmShaped(_ kind: OperandKind, _ text: String) -> String {
        let digit = "[0-9]"
        let hex = "[0-9a-fA-F]"
        switch (kind, dialect) {
        case (.dateOnly, .sqlite):
            let date = String(repeating: digit, count: 4) + "-\(digit)\(digit)-\(digit)\(digit)"
            return "(CASE WHEN \(text) GLOB '\(date)' OR \(text) GLOB '\(date)[Tt]*' THEN substr(\(text), 1, 10) END)"
        case (.dateOnly, _):
            return "(CASE WHEN \(text) ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt]|$)' THEN substr(\(text), 1, 10) END)"
        case (.timeOfDay, .sqlite):
            let time = "\(digit)\(digit):\(digit)\(digit):\(digit)\(digit)"
            return "(CASE WHEN \(text) GLOB '\(time)' OR \(text) GLOB '\(time).*' THEN \(text) END)"
        case (.timeOfDay, _):
            return "(CASE WHEN \(text) ~ '^[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.|$)' THEN \(text) END)"
        case (_, .sqlite):
            let guid = [8, 4, 4, 4, 12].map { String(repeating: hex, count: $0) }.joined(separator: "-")
            return "(CASE WHEN \(text) GLOB '\(guid)' THEN lower(\(text)) END)"
        case (_, _):
            let guid = [8, 4, 4, 4, 12].map { "\(hex){\($0)}" }.joined(separator: "-")
            return "(CASE WHEN \(text) ~ '^\(guid)$' THEN lower(\(text)) END)"
        }
    }

    /// A declared date column compared with a date literal (in either order), or `nil` for any other comparison.
    mutating func storedDateComparison(
        _ op: FilterBinaryOperator, _ left: Operand, _ right: Operand
    ) throws(FilterTranslationError) -> String? {
        let columnOnLeft = left.kind == .storedDate
        let (column, other) = columnOnLeft ? (left, right) : (right, left)
        guard column.kind == .storedDate, other.kind == .ticks else { return nil }
        guard let instant = other.dateLiteral else {
            throw FilterTranslationError(
                "cannot compare a date property with createdAt or updatedAt; compare it with a date literal")
        }
        // With the column on the left: `T lt due` is `due gt T`.
        let mirrored: [FilterBinaryOperator: FilterBinaryOperator] = [.gt: .lt, .ge: .le, .lt: .gt, .le: .ge]
        let columnOp = columnOnLeft ? op : mirrored[op] ?? op
        if columnOp == .ne {
            let text = builder.bind(.text(instant.canonical.text))
            return "(\(column.sql) \(dialect == .sqlite ? "IS NOT" : "IS DISTINCT FROM") \(text))"
        }
        guard let bound = FilterSQLTranslator.storedDateBound(columnOp, instant) else { return "FALSE" }
        let collate = dialect == .postgres ? " COLLATE \"C\"" : ""
        return
            """
            (\(column.sql)\(collate) \(bound.operator) \
            \(builder.bind(.text(bound.text))) AND \(column.sql) IS NOT NULL)
            """
    }

    /// The keyset cursor of an incremental pull, `updatedAt gt T or (updatedAt eq T and id gt S)`, as one row
    /// comparison `(updated_at, id) > (T, S)`: the same rows (both columns are `NOT NULL`), but a range of the
    /// `(table_name, updated_at, id)` index that stops after one page, where the `OR` scans the table. `nil`
    /// for any other shape.
    mutating func keysetCursor(
        _ lhs: FilterExpression, _ rhs: FilterExpression
    ) throws(FilterTranslationError) -> String? {
        let updatedAt = FilterExpression.property(SystemProperty.updatedAt)
        guard case .binary(.gt, updatedAt, .literal(.dateTime(let instant))) = lhs,
            case .binary(
                .and, .binary(.eq, updatedAt, .literal(.dateTime(let sameInstant))),
                .binary(.gt, .property(SystemProperty.id), .literal(.string(let lastID)))) = rhs,
            instant.ticks == sameInstant.ticks
        else { return nil }
        let ticks = builder.bind(.integer(instant.ticks))
        let id = builder.bind(.text(lastID))
        return "((\(RecordColumns.updatedAt), \(RecordColumns.id)) > (\(ticks), \(id)))"
    }

    /// Both operands as SQL of one kind.
    mutating func unify(
        _ left: Operand, _ right: Operand
    ) throws(FilterTranslationError) -> (String, String, OperandKind) {
        switch (left.kind, right.kind) {
        case (.json, .json):
            switch dialect {
            case .sqlite: return (rawValue(left), rawValue(right), .json)
            case .postgres: return (jsonbValue(left), jsonbValue(right), .json)
            }
        case (.json, .ticks), (.ticks, .json):
            // A date string in the body compares with a date literal as canonical text.
            let date = left.kind == .ticks ? left : right
            guard let literal = date.dateLiteral else {
                throw FilterTranslationError(
                    "cannot compare a property with createdAt or updatedAt; compare it with a date literal")
            }
            let text = builder.bind(.text(literal.canonical.text))
            let property = dateShaped(try typed(left.kind == .json ? left : right, as: .text))
            return left.kind == .json ? (property, text, .text) : (text, property, .text)
        case (.storedDate, .text), (.text, .storedDate), (.storedDate, .storedDate):
            // Stored dates are strings: compared with a string as text, as the evaluator compares two strings.
            return (left.sql, right.sql, .text)
        case (.json, let kind):
            return (try typed(left, as: kind), right.sql, kind)
        case (let kind, .json):
            return (left.sql, try typed(right, as: kind), kind)
        case (let a, let b) where a == b:
            return (left.sql, right.sql, a)
        case (let a, let b):
            throw FilterTranslationError("cannot compare \(a.rawValue) with \(b.rawValue)")
        }
    }

    mutating func membership(
        _ subject: FilterExpression, _ candidates: [FilterExpression]
    ) throws(FilterTranslationError) -> String {
        guard !candidates.isEmpty else { return "FALSE" }
        if ([subject] + candidates).contains(where: Self.isEdmLiteral) {
            // Each candidate compared as `eq` compares it, which reads strings as dates, times of day or guids.
            var tests: [String] = []
            for candidate in candidates { tests.append(try comparison(.eq, subject, candidate)) }
            return "(\(tests.joined(separator: " OR ")))"
        }
        let value = try operand(subject)
        var candidateOperands: [Operand] = []
        for candidate in candidates { candidateOperands.append(try operand(candidate)) }
        let nonNull = candidateOperands.filter { $0.kind != .null }
        let includesNull = nonNull.count < candidateOperands.count
        var conditions: [String] = []
        if let first = nonNull.first {
            // A stored date is in the list when its text is a listed date's canonical text (a listed date between
            // two milliseconds matches none).
            let kind =
                value.kind == .storedDate
                ? OperandKind.text
                : first.kind == .json ? (value.kind == .json ? OperandKind.text : value.kind) : first.kind
            let subjectSQL = try typed(value, as: kind)
            var list: [String] = []
            for candidate in nonNull { list.append(try typed(candidate, as: kind)) }
            let collate = dialect == .postgres && kind == .text ? " COLLATE \"C\"" : ""
            let test = "\(subjectSQL)\(collate) IN (\(list.joined(separator: ", ")))"
            conditions.append(value.declared ? "(\(test) AND \(subjectSQL) IS NOT NULL)" : "COALESCE(\(test), FALSE)")
        }
        if includesNull { conditions.append(isNull(value)) }
        return conditions.count == 1 ? conditions[0] : "(\(conditions.joined(separator: " OR ")))"
    }

    mutating func stringPredicate(
        _ function: FilterFunction, _ arguments: [FilterExpression]
    ) throws(FilterTranslationError) -> String {
        let (first, second) = try textArguments(function, arguments)
        let (haystack, needle) = function == .substringof ? (second, first) : (first, second)
        let test: String
        switch (function, dialect) {
        case (.startswith, .sqlite): test = "substr(\(haystack), 1, length(\(needle))) = \(needle)"
        case (.startswith, .postgres): test = "starts_with(\(haystack), \(needle))"
        case (.endswith, .sqlite): test = "substr(\(haystack), length(\(haystack)) - length(\(needle)) + 1) = \(needle)"
        case (.endswith, .postgres): test = "right(\(haystack), char_length(\(needle))) = \(needle)"
        case (_, .sqlite): test = "instr(\(haystack), \(needle)) > 0"
        case (_, .postgres): test = "strpos(\(haystack), \(needle)) > 0"
        }
        // NULL for a null or non-string argument: unknown, as in the evaluator.
        return "(\(test))"
    }

    mutating func textArguments(
        _ function: FilterFunction, _ arguments: [FilterExpression]
    ) throws(FilterTranslationError) -> (String, String) {
        guard arguments.count == 2 else {
            throw FilterTranslationError("\(function.rawValue)() takes 2 arguments, not \(arguments.count)")
        }
        let first = try operand(arguments[0])
        let second = try operand(arguments[1])
        return (try typed(first, as: .text), try typed(second, as: .text))
    }

    // MARK: Values

    mutating func operand(_ expression: FilterExpression) throws(FilterTranslationError) -> Operand {
        switch expression {
        case .literal(let literal):
            switch literal {
            case .null: return Operand(sql: "NULL", kind: .null)
            case .bool(let flag): return Operand(sql: builder.bind(.bool(flag)), kind: .boolean, neverNull: true)
            case .integer(let integer):
                return Operand(sql: builder.bind(.integer(integer)), kind: .number, neverNull: true)
            case .double(let double):
                guard double.isFinite else { throw FilterTranslationError("the number \(double) is not finite") }
                return Operand(sql: builder.bind(.double(double)), kind: .number, neverNull: true)
            case .string(let text): return Operand(sql: builder.bind(.text(text)), kind: .text, neverNull: true)
            case .dateTime(let timestamp):
                return Operand(
                    sql: builder.bind(.integer(timestamp.ticks)), kind: .ticks, dateLiteral: timestamp, neverNull: true)
            case .date(let text):
                return Operand(sql: builder.bind(.text(text)), kind: .dateOnly, edmText: text, neverNull: true)
            case .timeOfDay(let text):
                return Operand(sql: builder.bind(.text(text)), kind: .timeOfDay, edmText: text, neverNull: true)
            case .guid(let text):
                return Operand(sql: builder.bind(.text(text)), kind: .guid, edmText: text, neverNull: true)
            }
        case .property(let name):
            return try property(name)
        case .unary(.negate, _) where Self.isNumberConstant(expression),
            .binary(.add, _, _) where Self.isNumberConstant(expression),
            .binary(.sub, _, _) where Self.isNumberConstant(expression),
            .binary(.mul, _, _) where Self.isNumberConstant(expression),
            .binary(.div, _, _) where Self.isNumberConstant(expression),
            .binary(.mod, _, _) where Self.isNumberConstant(expression):
            // Arithmetic of literals alone is the server's: each database overflows its own way (SQLite turns to
            // doubles, PostgreSQL fails), and the evaluator's answer is the one both must give.
            return try operand(.literal(FilterEvaluator.evaluate(expression, record: [:])))
        case .unary(.negate, let inner):
            let value = try operand(inner)
            return Operand(sql: "(-\(try typed(value, as: .number)))", kind: .number)
        case .unary(.not, _), .in:
            return Operand(sql: try predicate(expression), kind: .boolean)
        case .binary(let op, let lhs, let rhs):
            switch op {
            case .add, .sub, .mul, .div, .mod:
                return Operand(sql: try arithmetic(op, lhs, rhs), kind: .number)
            default:
                return Operand(sql: try predicate(expression), kind: .boolean)
            }
        case .function(let function, let arguments):
            return try call(function, arguments)
        }
    }

    /// `true` for a date, time-of-day or guid literal.
    static func isEdmLiteral(_ expression: FilterExpression) -> Bool {
        switch expression {
        case .literal(.date), .literal(.timeOfDay), .literal(.guid): true
        default: false
        }
    }

    /// `true` for arithmetic (`add sub mul div mod`, unary `-`) of number literals alone.
    static func isNumberConstant(_ expression: FilterExpression) -> Bool {
        switch expression {
        case .literal(.integer), .literal(.double): return true
        case .unary(.negate, let inner): return isNumberConstant(inner)
        case .binary(let op, let left, let right):
            return [.add, .sub, .mul, .div, .mod].contains(op) && isNumberConstant(left) && isNumberConstant(right)
        default: return false
        }
    }

    mutating func property(_ name: String) throws(FilterTranslationError) -> Operand {
        if SystemProperty.isSystemProperty(name) {
            switch RecordColumns.column(forSystemProperty: name) {
            case RecordColumns.id?: return Operand(sql: RecordColumns.id, kind: .text, neverNull: true)
            case RecordColumns.createdAt?: return Operand(sql: RecordColumns.createdAt, kind: .ticks, neverNull: true)
            case RecordColumns.updatedAt?: return Operand(sql: RecordColumns.updatedAt, kind: .ticks, neverNull: true)
            case RecordColumns.deleted?: return Operand(sql: RecordColumns.deleted, kind: .boolean, neverNull: true)
            default: throw FilterTranslationError("'\(name)' cannot be used in $filter; it is an opaque token")
            }
        }
        guard PropertyName.isPlain(name) else {
            throw FilterTranslationError(
                "'\(name)' is not a property name this server can filter on (letters, digits and _ only)")
        }
        if let schema {
            guard let column = schema.column(named: name) else {
                throw FilterTranslationError(
                    "'\(name)' is not a column of this table; its columns are \(schema.listed)")
            }
            let kind: OperandKind =
                switch column.type {
                case .string: .text
                case .number: .number
                case .boolean: .boolean
                case .date: .storedDate
                case .dateOnly: .text
                }
            return Operand(
                sql: DeclaredColumnSQL.value(column, dialect: dialect), kind: kind, declared: true,
                holdsDates: column.type == .dateOnly)
        }
        return Operand(sql: "", kind: .json, property: name)
    }

    mutating func arithmetic(
        _ op: FilterBinaryOperator, _ lhs: FilterExpression, _ rhs: FilterExpression
    ) throws(FilterTranslationError) -> String {
        let left = try typed(try operand(lhs), as: .number)
        let right = try typed(try operand(rhs), as: .number)
        switch (op, dialect) {
        case (.add, _): return "(\(left) + \(right))"
        case (.sub, _): return "(\(left) - \(right))"
        case (.mul, _): return "(\(left) * \(right))"
        case (.div, .sqlite): return "(\(left) / NULLIF(\(right), 0))"
        case (.div, .postgres): return "(CAST(\(left) AS DOUBLE PRECISION) / NULLIF(\(right), 0))"
        case (.mod, .sqlite): return "(\(left) % NULLIF(\(right), 0))"
        case (.mod, .postgres): return "MOD(CAST(\(left) AS NUMERIC), CAST(NULLIF(\(right), 0) AS NUMERIC))"
        default: throw FilterTranslationError("'\(op.rawValue)' is not an arithmetic operator")
        }
    }

    mutating func call(
        _ function: FilterFunction, _ arguments: [FilterExpression]
    ) throws(FilterTranslationError) -> Operand {
        func expectCount(_ counts: ClosedRange<Int>) throws(FilterTranslationError) {
            try Self.expectCount(counts, of: function, arguments)
        }
        switch function {
        case .startswith, .endswith, .substringof, .contains:
            return Operand(sql: try stringPredicate(function, arguments), kind: .boolean)
        case .indexof:
            let (haystack, needle) = try textArguments(function, arguments)
            let position = dialect == .sqlite ? "instr(\(haystack), \(needle))" : "strpos(\(haystack), \(needle))"
            return Operand(sql: "(\(position) - 1)", kind: .number)
        case .concat:
            let (first, second) = try textArguments(function, arguments)
            return Operand(sql: "(\(first) || \(second))", kind: .text)
        case .replace:
            try expectCount(3...3)
            var texts: [String] = []
            for argument in arguments { texts.append(try typed(try operand(argument), as: .text)) }
            // Both databases replace every occurrence by code point and leave the text as it is for an empty pattern.
            return Operand(sql: "replace(\(texts.joined(separator: ", ")))", kind: .text)
        case .isof:
            try expectCount(2...2)
            return Operand(sql: try typeTest(arguments), kind: .boolean, neverNull: true)
        case .length, .tolower, .toupper, .trim:
            try expectCount(1...1)
            return textFunction(function, of: try typed(try operand(arguments[0]), as: .text))
        case .substring:
            try expectCount(2...3)
            return try substring(arguments)
        case .year, .month, .day, .hour, .minute, .second:
            try expectCount(1...1)
            return Operand(sql: try datePart(function, try operand(arguments[0])), kind: .number)
        case .round, .floor, .ceiling:
            try expectCount(1...1)
            return roundingFunction(function, of: try typed(try operand(arguments[0]), as: .number))
        case .castDateTimeOffset:
            try expectCount(1...2)
            return try castToDateTimeOffset(arguments[0])
        }
    }

    /// Refuses a call of `function` whose `arguments` are not `counts` in number.
    private static func expectCount(
        _ counts: ClosedRange<Int>, of function: FilterFunction, _ arguments: [FilterExpression]
    ) throws(FilterTranslationError) {
        guard !counts.contains(arguments.count) else { return }
        let expected =
            counts.lowerBound == counts.upperBound
            ? "\(counts.lowerBound)" : "\(counts.lowerBound) or \(counts.upperBound)"
        throw FilterTranslationError(
            """
            \(function.rawValue)() takes \(expected) argument\(counts.upperBound == 1 ? "" : "s"), not \
            \(arguments.count)
            """
        )
    }

    /// `length`, `tolower`, `toupper` or `trim` of the text expression `text`.
    private func textFunction(_ function: FilterFunction, of text: String) -> Operand {
        switch function {
        case .length:
            return Operand(sql: dialect == .sqlite ? "length(\(text))" : "char_length(\(text))", kind: .number)
        case .tolower: return Operand(sql: "\(UnicodeCaseFunctions.lower(dialect))(\(text))", kind: .text)
        case .toupper: return Operand(sql: "\(UnicodeCaseFunctions.upper(dialect))(\(text))", kind: .text)
        default: return Operand(sql: "trim(\(text))", kind: .text)
        }
    }

    /// `substring(text, start)` or `substring(text, start, length)`.
    private mutating func substring(_ arguments: [FilterExpression]) throws(FilterTranslationError) -> Operand {
        let text = try typed(try operand(arguments[0]), as: .text)
        let start = try typed(try operand(arguments[1]), as: .number)
        // A negative start or length counts as 0, as in the evaluator (SQLite and PostgreSQL differ there).
        let clamp = dialect == .sqlite ? "max" : "GREATEST"
        var sql = "substr(\(text), \(clamp)(CAST(\(start) AS INTEGER), 0) + 1"
        if arguments.count == 3 {
            sql += ", \(clamp)(CAST(\(try typed(try operand(arguments[2]), as: .number)) AS INTEGER), 0)"
        }
        return Operand(sql: sql + ")", kind: .text)
    }

    /// `round`, `floor` or `ceiling` of the number expression `number`.
    private func roundingFunction(_ function: FilterFunction, of number: String) -> Operand {
        switch (function, dialect) {
        case (.round, .sqlite): return Operand(sql: "round(\(number))", kind: .number)
        case (.round, .postgres): return Operand(sql: "ROUND(CAST(\(number) AS NUMERIC))", kind: .number)
        case (.floor, _): return Operand(sql: "floor(\(number))", kind: .number)
        default: return Operand(sql: "ceil(\(number))", kind: .number)
        }
    }

    /// `cast(x, Edm.DateTimeOffset)`: a date property or value as it is, a date literal as its ticks.
    private mutating func castToDateTimeOffset(_ argument: FilterExpression) throws(FilterTranslationError) -> Operand {
        let value = try operand(argument)
        switch value.kind {
        case .ticks, .json, .storedDate, .null: return value
        case .text:
            if case .literal(.string(let text)) = argument, let timestamp = Timestamp(parsing: text) {
                return Operand(sql: builder.bind(.integer(timestamp.ticks)), kind: .ticks, dateLiteral: timestamp)
            }
            throw FilterTranslationError("cast() to Edm.DateTimeOffset needs a date literal or a property")
        default:
            throw FilterTranslationError("cannot cast \(value.kind.rawValue) to Edm.DateTimeOffset")
        }
    }

    /// `isof(x, T)`: never NULL, like the evaluator's. `x` must be a property (or a literal): its JSON type is
    /// what the test is about, and other expressions would need their own rules for little use.
    mutating func typeTest(_ arguments: [FilterExpression]) throws(FilterTranslationError) -> String {
        guard case .literal(.string(let name)) = arguments[1], let type = FilterTypeName(named: name) else {
            throw FilterTranslationError(
                "isof() takes a type: \(FilterTypeName.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        switch arguments[0] {
        case .literal(let literal):
            return type.describes(literal) ? "TRUE" : "FALSE"
        case .property(let name):
            let value = try property(name)
            guard value.kind == .json, let key = value.property else {
                // A column: system dates are strings in records, as every other typed value is what its kind says.
                let kind: FilterTypeName =
                    switch value.kind {
                    case .boolean: .boolean
                    case .number: .double
                    default: .string
                    }
                guard kind == type else { return "FALSE" }
                return value.neverNull ? "TRUE" : "(\(value.sql) IS NOT NULL)"
            }
            switch dialect {
            case .sqlite:
                let jsonTypes =
                    switch type {
                    case .string: "'text'"
                    case .boolean: "'true', 'false'"
                    case .double: "'integer', 'real'"
                    }
                return "COALESCE(\(sqliteType(key)) IN (\(jsonTypes)), FALSE)"
            case .postgres:
                let jsonType =
                    switch type {
                    case .string: "string"
                    case .boolean: "boolean"
                    case .double: "number"
                    }
                return "COALESCE(jsonb_typeof(\(postgresValue(key).json)) = '\(jsonType)', FALSE)"
            }
        default:
            throw FilterTranslationError("isof() tests a property, as in isof(text, Edm.String)")
        }
    }

    mutating func datePart(_ function: FilterFunction, _ value: Operand) throws(FilterTranslationError) -> String {
        let (sqliteFormat, postgresField): (String, String)
        switch function {
        case .year: (sqliteFormat, postgresField) = ("%Y", "YEAR")
        case .month: (sqliteFormat, postgresField) = ("%m", "MONTH")
        case .day: (sqliteFormat, postgresField) = ("%d", "DAY")
        case .hour: (sqliteFormat, postgresField) = ("%H", "HOUR")
        case .minute: (sqliteFormat, postgresField) = ("%M", "MINUTE")
        default: (sqliteFormat, postgresField) = ("%S", "SECOND")
        }
        let instant: String
        switch (value.kind, dialect) {
        case (.ticks, .sqlite):
            instant = "\(value.sql) / \(Timestamp.ticksPerSecond), 'unixepoch'"
        case (.ticks, .postgres):
            instant = "(to_timestamp(\(value.sql) / \(Timestamp.ticksPerSecond).0) AT TIME ZONE 'UTC')"
        case (.json, .sqlite), (.storedDate, .sqlite),
            (.text, .sqlite) where value.holdsDates:
            instant = try typed(value, as: .text)
        case (.json, .postgres), (.storedDate, .postgres),
            (.text, .postgres) where value.holdsDates:
            // Only text shaped like an ISO date reaches the cast, so ordinary strings give NULL, not an error (a
            // declared date is always one, but rows of other tables may be read too).
            // A date without a time (`2018-02-16`) is midnight UTC, whatever the session's time zone.
            let text = try typed(value, as: .text)
            instant =
                """
                (CAST(CASE WHEN \(text) ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}' THEN \(text) \
                WHEN \(text) ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' THEN \(text) || 'T00:00:00Z' END AS \
                TIMESTAMPTZ) AT TIME ZONE 'UTC')
                """
        default:
            throw FilterTranslationError("\(function.rawValue)() needs a date, not \(value.kind.rawValue)")
        }
        switch dialect {
        case .sqlite: return "CAST(strftime('\(sqliteFormat)', \(instant)) AS INTEGER)"
        case .postgres: return "FLOOR(EXTRACT(\(postgresField) FROM \(instant)))"
        }
    }

    // MARK: Typing

    /// `value` as SQL of `kind`: a body property of another JSON type reads as NULL.
    mutating func typed(_ value: Operand, as kind: OperandKind) throws(FilterTranslationError) -> String {
        if value.kind == kind || value.kind == .null || (value.kind == .storedDate && kind == .text) {
            return value.sql
        }
        if value.kind == .json, let name = value.property {
            switch (kind, dialect) {
            case (.text, .sqlite):
                return "(CASE WHEN \(sqliteType(name)) = 'text' THEN \(sqliteValue(name)) END)"
            case (.number, .sqlite):
                return "(CASE WHEN \(sqliteType(name)) IN ('integer', 'real') THEN \(sqliteValue(name)) END)"
            case (.boolean, .sqlite):
                return "(CASE \(sqliteType(name)) WHEN 'true' THEN TRUE WHEN 'false' THEN FALSE END)"
            case (.text, .postgres):
                let property = postgresValue(name)
                return "(CASE WHEN jsonb_typeof(\(property.json)) = 'string' THEN \(property.text) END)"
            case (.number, .postgres):
                let property = postgresValue(name)
                return
                    """
                    (CASE WHEN jsonb_typeof(\(property.json)) = 'number' THEN \
                    CAST(\(property.text) AS DOUBLE PRECISION) END)
                    """
            case (.boolean, .postgres):
                let property = postgresValue(name)
                return
                    """
                    (CASE WHEN jsonb_typeof(\(property.json)) = 'boolean' THEN \
                    CAST(\(property.text) AS BOOLEAN) END)
                    """
            default:
                break
            }
        }
        if kind == .text, let literal = value.dateLiteral {
            return builder.bind(.text(literal.canonical.text))
        }
        throw FilterTranslationError(
            """
            expected \(kind.rawValue) but found \
            \(value.kind == .json ? "property '\(value.property ?? "")'" : value.kind.rawValue)
            """
        )
    }

    /// `text` when it starts like an ISO 8601 date-time, otherwise NULL: a string that is no date never
    /// compares with a date (as in the evaluator).
    func dateShaped(_ text: String) -> String {
        switch dialect {
        case .sqlite:
            return
                """
                (CASE WHEN \(text) GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][Tt][0-9][0-9]:[0-9][0-9]*' THEN \
                \(text) END)
                """
        case .postgres:
            return "(CASE WHEN \(text) ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}' THEN \(text) END)"
        }
    }

    /// The condition "`value` is null": a missing property, JSON `null`, and (as the evaluator reads them)
    /// arrays and objects.
    mutating func isNull(_ value: Operand) -> String {
        guard value.kind == .json, let name = value.property else {
            return value.kind == .null ? "TRUE" : "(\(value.sql) IS NULL)"
        }
        let type =
            switch dialect {
            case .sqlite: sqliteType(name)
            case .postgres: "jsonb_typeof(\(postgresValue(name).json))"
            }
        return "(COALESCE(\(type), 'null') IN ('null', 'object', 'array'))"
    }

    /// The value of an operand with SQL NULL for a missing property and for JSON `null`.
    mutating func rawValue(_ value: Operand) -> String {
        guard value.kind == .json, let name = value.property else { return value.sql }
        switch dialect {
        case .sqlite: return sqliteValue(name)
        case .postgres: return "(\(postgresValue(name).text))"
        }
    }

    /// A body property as `jsonb`, for comparing two properties of unknown type in PostgreSQL.
    mutating func jsonbValue(_ value: Operand) -> String {
        "(\(postgresValue(value.property ?? "").json))"
    }
}
