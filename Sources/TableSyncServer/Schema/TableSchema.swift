import SyncProtocol

/// The declared columns of a table, as Azure's servers let a table declare them (the node server's `columns` with
/// `dynamicSchema: false`, the .NET server's model class): a record of such a table holds only those properties,
/// each of its declared type or `null`, besides the system properties.
///
/// ```swift
/// let schema = try TableSchema(parsing: "text:string;done:boolean;due:date;rank:number")
/// try schema.validate(["text": "milk", "due": "2024-05-01T12:00:00+02:00"])
/// // ["text": "milk", "due": "2024-05-01T10:00:00.000Z"]: dates are stored canonically
/// try schema.validate(["colour": "red"])   // SchemaViolation: the property 'colour' is not declared …
/// ```
///
/// The rules, applied to every write (docs/server.md):
/// - A property that is not declared is refused. So is a value of another JSON type than its column's: a
///   `string` column takes strings, `number` numbers, `boolean` `true`/`false`, `date` strings. `null` is
///   accepted for every column, and a missing property reads as `null` (as in `$filter`).
/// - A `date` is a string that ``Timestamp`` parses (0–7 fraction digits, `Z` or an offset) with at most
///   millisecond precision; it is stored as `yyyy-MM-ddTHH:mm:ss.fffZ` in UTC, so that stored dates compare as text
///   in time order. A finer value is refused rather than silently cut.
/// - A `dateonly` is a valid calendar date written `yyyy-MM-dd`, stored as written.
/// - System properties are not part of the schema; they are checked as for every table (``IncomingRecord``).
public struct TableSchema: Sendable, Hashable {
    /// The columns, in name order.
    public let columns: [DeclaredColumn]

    /// A schema of `columns`: at least one, with names that differ in more than case (a property matches its column
    /// in any case, so `postId` and `postid` could not be told apart).
    public init(columns: [DeclaredColumn]) throws(ConfigurationError) {
        guard !columns.isEmpty else { throw ConfigurationError("declare at least one column, as name:type") }
        var names: [String: String] = [:]
        for column in columns {
            guard let other = names.updateValue(column.name, forKey: column.name.lowercased()) else { continue }
            throw other == column.name
                ? ConfigurationError("the column '\(column.name)' is declared twice")
                : ConfigurationError(
                    """
                    the columns '\(other)' and '\(column.name)' differ only in case; properties match their column in \
                    any case, so declare one of them
                    """
                )
        }
        self.columns = columns.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// Parses `name:type;name:type…` (the value of the `columns` table option), types being
    /// `string`, `number`, `boolean` and `date`.
    public init(parsing text: String) throws(ConfigurationError) {
        var columns: [DeclaredColumn] = []
        for declaration in text.split(separator: ";", omittingEmptySubsequences: false) {
            let parts = declaration.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty else {
                throw ConfigurationError("expected name:type in the columns, found '\(declaration)'")
            }
            columns.append(try DeclaredColumn(name: parts[0], type: try Self.type(named: parts[1], column: parts[0])))
        }
        try self.init(columns: columns)
    }

    /// The type called `name` (`string`, `number`, `boolean`, `date`); `column` names the column in the error.
    static func type(named name: String, column: String) throws(ConfigurationError) -> ColumnType {
        guard let type = ColumnType(rawValue: name) else {
            throw ConfigurationError(
                """
                the column '\(column)' has the unknown type '\(name)'; use \
                \(ColumnType.allCases.map(\.rawValue).joined(separator: ", "))
                """
            )
        }
        return type
    }

    /// The schema as ``init(parsing:)`` reads it, columns in name order: one spelling per schema, so that a stored
    /// copy tells whether the declaration changed.
    public var text: String { columns.map { "\($0.name):\($0.type.rawValue)" }.joined(separator: ";") }

    /// The column `name` stands for, if declared: names match in any case (ASCII letters), so a client that writes
    /// `postid` reaches the column declared `postId`, as Azure's node server and Datasync's OData parser match them.
    /// What is stored and answered carries the declared spelling.
    package func column(named name: String) -> DeclaredColumn? {
        columns.first { $0.name == name } ?? columns.first { $0.name.caseInsensitiveEquals(name) }
    }

    /// `name` as its declared column spells it, or as it is when it names no column (a system property, or a name
    /// a later check refuses).
    package func declaredSpelling(_ name: String) -> String { column(named: name)?.name ?? name }

    /// The columns as a person reads them in a message: `done (boolean), rank (number)`.
    var listed: String { columns.map { "\($0.name) (\($0.type.rawValue))" }.joined(separator: ", ") }

    /// `properties` (a record without its system properties) as they are stored: under their columns' declared
    /// spelling, dates in canonical form. Throws the first violation, in property name order, so the same body always
    /// gets the same answer; a body that names one column twice in different cases is refused naming both.
    package func validate(_ properties: [String: JSONValue]) throws(SchemaViolation) -> [String: JSONValue] {
        var stored: [String: JSONValue] = [:]
        var sentAs: [String: String] = [:]
        for name in properties.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            guard let column = column(named: name) else {
                throw SchemaViolation(property: name, problem: "is not declared; the declared columns are \(listed)")
            }
            if let other = sentAs.updateValue(name, forKey: column.name) {
                throw SchemaViolation(
                    property: column.name,
                    problem: "is given twice, as '\(other)' and '\(name)'; send it once, as \(column.name)")
            }
            stored[column.name] = try Self.stored(properties[name] ?? .null, in: column)
        }
        return stored
    }

    /// Throws unless `properties` are exactly what ``validate(_:)`` would store: how rows written before the
    /// declaration are checked against it.
    package func checkStored(_ properties: [String: JSONValue]) throws(SchemaViolation) {
        let stored = try validate(properties)
        for name in properties.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        where stored[name] == nil {
            throw SchemaViolation(
                property: name, problem: "is spelled unlike its column, '\(column(named: name)?.name ?? name)'")
        }
        for name in stored.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        where stored[name] != properties[name] {
            throw SchemaViolation(
                property: name,
                problem:
                    """
                    holds \(CanonicalJSON.string(properties[name] ?? .null, style: .compact)), not the form the column \
                    stores (\(CanonicalJSON.string(stored[name] ?? .null, style: .compact)))
                    """
            )
        }
    }

    /// The most UTF-8 bytes a value of a declared string column holds. The column's index holds the value beside the
    /// record's id (up to 255 characters, 1,020 bytes), and a PostgreSQL B-tree entry holds at most a third of a page,
    /// 2,704 bytes, however little the value compresses; SQLite has no such bound, and the same value must get the
    /// same answer from both.
    package static let maximumStringBytes = 1_600

    /// The stored form of `value` in `column`, or the reason it does not fit.
    static func stored(_ value: JSONValue, in column: DeclaredColumn) throws(SchemaViolation) -> JSONValue {
        switch (column.type, value) {
        case (.string, .string(let text)):
            let bytes = text.utf8.count
            guard bytes <= maximumStringBytes else {
                throw SchemaViolation(
                    property: column.name,
                    problem:
                        """
                        holds \(bytes) bytes (UTF-8); a declared string column holds at most \(maximumStringBytes), \
                        as its index must hold the value
                        """
                )
            }
            return value
        case (_, .null), (.number, .integer), (.number, .double), (.boolean, .bool):
            return value
        case (.dateOnly, .string(let text)):
            guard EdmValueText.date(text) != nil else {
                throw SchemaViolation(
                    property: column.name, problem: "must be \(ColumnType.dateOnly.described), or null, not '\(text)'")
            }
            return value
        case (.date, .string(let text)):
            guard let timestamp = Timestamp(parsing: text) else {
                throw SchemaViolation(
                    property: column.name, problem: "must be \(ColumnType.date.described), or null, not '\(text)'")
            }
            guard timestamp.ticks % 10_000 == 0 else {
                throw SchemaViolation(
                    property: column.name,
                    problem:
                        """
                        has more precision than a millisecond ('\(text)'); dates are \
                        stored as yyyy-MM-ddTHH:mm:ss.fffZ
                        """
                )
            }
            return .string(Timestamp(ticks: timestamp.ticks).text)
        default:
            throw SchemaViolation(
                property: column.name,
                problem:
                    """
                    must be \(column.type.described), or null, not \
                    \(value.typeName == "array" || value.typeName == "object" ? "an" : "a") \(value.typeName)
                    """
            )
        }
    }
}
