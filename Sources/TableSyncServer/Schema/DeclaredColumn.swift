import SyncProtocol

/// One declared column of a table: a property name and the type of its values (`rank:number`).
public struct DeclaredColumn: Sendable, Hashable {
    /// The property name: a plain identifier (``PropertyName/isPlain(_:)``) that is not a system property.
    public let name: String
    /// What the property holds.
    public let type: ColumnType

    /// A column called `name` of `type`; throws when `name` cannot be one.
    public init(name: String, type: ColumnType) throws(ConfigurationError) {
        guard PropertyName.isPlain(name) else {
            throw ConfigurationError(
                """
                the column name '\(name)' is not a plain property name (ASCII letters, digits and _, not starting with \
                a digit)
                """
            )
        }
        guard !SystemProperty.isSystemProperty(name) else {
            throw ConfigurationError("'\(name)' is a system property; the server manages it and it cannot be declared")
        }
        self.name = name
        self.type = type
    }
}
