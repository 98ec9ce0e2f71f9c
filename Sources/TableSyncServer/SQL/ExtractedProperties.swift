import SyncProtocol

/// The body properties a list statement's `$filter` and `$orderby` name, read from each record's body once.
///
/// Every reference to `body` in a statement reads the stored body anew, and each reading is a copy of it (SQLite
/// loads it into a register of its own, PostgreSQL detoasts it), held until the row is done: a filter naming a
/// property a hundred times held a hundred copies of the largest record. A statement that names body properties
/// therefore reads its rows in two steps (``RecordQuerySQL``): the first reads every named property from the body
/// in one call (SQLite: one `json_extract` with all their paths, an array; PostgreSQL: one `jsonb_each`, an object of
/// those keys), the second splits that value into one column per property, and the conditions and the order read
/// those columns. `OFFSET 0` keeps either database from merging the steps back into one.
///
/// A large value that the query names is still copied more than once: on SQLite each column of the second step
/// copies the first step's value, which holds it, and each reference to a column copies that column's value (the
/// limit of ``ListQuery/maximumFilterProperties`` bounds the first); on PostgreSQL each reference converting the
/// value to text copies it.
struct ExtractedProperties: Sendable, Hashable {
    /// The properties, each once, in the order they were first named.
    let names: [String]

    /// The body properties `query` names, or `nil` when it names none or its table declares columns (whose values
    /// its own expressions read).
    init?(query: ListQuery) {
        guard query.schema == nil else { return nil }
        let named = (query.filter?.propertyNames ?? []) + query.orderBy.map(\.property)
        var names: [String] = []
        for name in named where !SystemProperty.isSystemProperty(name) && !names.contains(name) {
            names.append(name)
        }
        guard !names.isEmpty else { return nil }
        self.names = names
    }

    /// The column of the first step that holds the named properties' values.
    static let extracted = "extracted"

    /// The column of the second step holding the value of `names[index]`: on SQLite what `json_extract` gives for
    /// it, on PostgreSQL its `jsonb`; NULL when the body lacks it.
    static func valueColumn(_ index: Int) -> String { "property_\(index)" }

    /// The column of the second step holding the JSON type of `names[index]` as `json_type` names it (SQLite only).
    static func typeColumn(_ index: Int) -> String { "property_type_\(index)" }

    /// The SQL that reads every named property from `body` at once, binding the names (or paths) into `builder`.
    func extraction(into builder: inout SQLBuilder) -> String {
        switch builder.dialect {
        case .sqlite:
            // With two paths or more json_extract gives an array; one path is given twice for the same shape.
            var paths = names.map { builder.bind(.text(FilterSQLTranslator.jsonPath($0))) }
            if paths.count == 1 { paths.append(paths[0]) }
            return "json_extract(\(RecordColumns.body), \(paths.joined(separator: ", ")))"
        case .postgres:
            let keys = names.map { builder.bind(.text($0)) }
            return
                """
                (SELECT jsonb_object_agg(key, value) FROM jsonb_each(\(RecordColumns.body)) WHERE key IN \
                (\(keys.joined(separator: ", "))))
                """
        }
    }

    /// The second step's columns, after the record's own: each property's value (and on SQLite its type).
    func columns(into builder: inout SQLBuilder) -> String {
        names.indices.map { index in
            switch builder.dialect {
            case .sqlite:
                let path = builder.bind(.text("$[\(index)]"))
                return
                    """
                    json_extract(\(Self.extracted), \(path)) AS \(Self.valueColumn(index)), \
                    json_type(\(Self.extracted), \(path)) AS \(Self.typeColumn(index))
                    """
            case .postgres:
                return "\(Self.extracted) -> \(builder.bind(.text(names[index]))) AS \(Self.valueColumn(index))"
            }
        }.joined(separator: ", ")
    }

    /// The position of `name` among ``names``.
    func index(of name: String) -> Int? { names.firstIndex(of: name) }
}
