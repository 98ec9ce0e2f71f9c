/// The types `isof(x, T)` tests in a schemaless record: the kinds a JSON value has.
///
/// ```swift
/// let filter = try FilterParser.parse("isof(rank, Edm.Double) and rank gt 3")
/// ```
///
/// A record's properties are JSON, so the only types a value can be checked for are JSON's own: a string, a
/// boolean, a number. OData's other type names do not say anything a JSON value knows: JSON has one number type
/// (so `Edm.Int32` or `Edm.Decimal` would test how a number happens to be written), and a date is a string
/// (`Edm.DateTimeOffset` would depend on which date texts a database can parse). The parser refuses them, and
/// the one-argument form `isof(T)`, which tests the type of the record itself.
public enum FilterTypeName: String, Sendable, Hashable, CaseIterable {
    /// A JSON string (a date in a record is one too).
    case string = "Edm.String"
    /// JSON `true` or `false`.
    case boolean = "Edm.Boolean"
    /// A JSON number, whether written with a fraction or not.
    case double = "Edm.Double"

    /// The type called `name`, matched without regard to case as OData's type names are elsewhere in `$filter`.
    public init?(named name: String) {
        guard let type = Self.allCases.first(where: { $0.rawValue.caseInsensitiveEquals(name) }) else { return nil }
        self = type
    }

    /// `true` when `value` is of this type; a null value is of none.
    public func describes(_ value: FilterLiteral) -> Bool {
        switch (self, value) {
        case (.string, .string), (.boolean, .bool), (.double, .integer), (.double, .double): return true
        default: return false
        }
    }
}
