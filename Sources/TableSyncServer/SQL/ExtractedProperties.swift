import SyncProtocol

/// The body properties a list statement's `$filter` and `$orderby` name, read from each record's body once.
///
/// Every reference to `body` in a statement reads the stored body anew, and each reading is a copy of it (SQLite
/// loads it into a register of its own, PostgreSQL detoasts it), held until the row is done: a filter naming a
/// property a hundred times held a hundred copies of the largest record. A statement that names body properties
/// therefore reads them into columns first (``source(rows:into:)``), one per property, and the conditions and the
/// order read those columns.
///
/// On SQLite (3.40, Debian 12's) every call of a JSON function in a statement (`json_extract`, `json_type`) keeps
/// its own parse of the last document it read, a copy of it, until the statement ends: a call per property over a
/// document holding a large value held a copy per property. So the body is walked once by `json_each`, which keeps
/// no such copy, and its members are gathered into the columns by one aggregate each, grouped by row (in the order
/// the rows are read, with no sort); only a large value itself is copied, into its column. On PostgreSQL one
/// `jsonb_each` gathers the named members into an object that a second step splits into the columns; `OFFSET 0`
/// keeps the database from merging the steps back into one.
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

    /// The column of the first step that holds the named properties' values (PostgreSQL).
    static let extracted = "extracted"

    /// The column holding the value of `names[index]`: on SQLite what `json_extract` would give for it (`json_each`'s
    /// `value`), on PostgreSQL its `jsonb`; NULL when the body lacks it.
    static func valueColumn(_ index: Int) -> String { "property_\(index)" }

    /// The column holding the JSON type of `names[index]` as `json_type` names it (`json_each`'s `type`; SQLite
    /// only).
    static func typeColumn(_ index: Int) -> String { "property_type_\(index)" }

    /// The records that `rows` (a condition on the records table) selects, as a table: the records' own columns,
    /// then each named property's. Binds the names into `builder`.
    func source(rows: String, into builder: inout SQLBuilder) -> String {
        let recordColumns = [
            RecordColumns.id, RecordColumns.createdAt, RecordColumns.updatedAt, RecordColumns.deleted,
            RecordColumns.body
        ]
        switch builder.dialect {
        case .sqlite:
            let keys = names.map { builder.bind(.text($0)) }
            let columns = keys.indices.map { index in
                """
                max(CASE WHEN member.key = \(keys[index]) THEN member.value END) AS \(Self.valueColumn(index)), \
                max(CASE WHEN member.key = \(keys[index]) THEN member.type END) AS \(Self.typeColumn(index))
                """
            }
            // The rows are chosen in a subquery of their own, where the names of its condition cannot meet those of
            // json_each's columns (`id`); reading them in rowid order lets GROUP BY go without a sort.
            return
                """
                (SELECT \(recordColumns.map { "record.\($0) AS \($0)" }.joined(separator: ", ")), \
                \(columns.joined(separator: ", ")) FROM \(RecordColumns.recordsTable) AS record LEFT JOIN \
                json_each(record.\(RecordColumns.body)) AS member ON member.key IN (\(keys.joined(separator: ", "))) \
                WHERE record.rowid IN (SELECT rowid FROM \(RecordColumns.recordsTable) WHERE \(rows)) GROUP BY \
                record.rowid)
                """
        case .postgres:
            let keys = names.map { builder.bind(.text($0)) }
            let columns = names.indices.map {
                "\(Self.extracted) -> \(builder.bind(.text(names[$0]))) AS \(Self.valueColumn($0))"
            }
            let record = recordColumns.joined(separator: ", ")
            return
                """
                (SELECT \(record), \(columns.joined(separator: ", ")) FROM (SELECT \(record), \
                (SELECT jsonb_object_agg(key, value) FROM jsonb_each(\(RecordColumns.body)) WHERE key IN \
                (\(keys.joined(separator: ", ")))) AS \(Self.extracted) FROM \(RecordColumns.recordsTable) WHERE \
                \(rows) OFFSET 0) AS records OFFSET 0)
                """
        }
    }

    /// The position of `name` among ``names``.
    func index(of name: String) -> Int? { names.firstIndex(of: name) }
}
