import SyncProtocol

/// What starting the server does for one table whose declared columns may differ from those it was last served
/// with (the stored declaration, in `tablesync_declared_columns`), as a pure decision both repositories follow.
///
/// - Unchanged: nothing to check (every write since has been validated); the indexes are created if missing.
/// - New or changed declaration: every stored row of the table, soft-deleted ones too, must fit it
///   (``TableSchema/checkStored(_:)``) or the server refuses to start, naming the record and the property. Then the
///   declaration is stored, the new indexes are created and those of columns no longer declared (or declared with
///   another type) dropped (on PostgreSQL after the commit, `CONCURRENTLY`).
/// - Declaration removed (the table is schemaless again): its indexes are dropped and the stored declaration
///   removed; the rows stay as they are.
struct SchemaTransition: Sendable {
    let table: String
    /// The declaration the table was last served with; `nil` for none.
    let stored: TableSchema?
    /// The declaration it is served with now; `nil` for none.
    let declared: TableSchema?

    /// The transition from `storedText` (as read from the database) to `declared`.
    init(table: String, storedText: String?, declared: TableSchema?) throws(ConfigurationError) {
        self.table = table
        self.declared = declared
        do {
            stored = try storedText.map(TableSchema.init(parsing:))
        } catch {
            throw ConfigurationError(
                """
                table \(table): the stored declaration '\(storedText ?? "")' cannot be read (\(error.message)); the \
                table \(RecordColumns.declaredColumnsTable) was changed by hand
                """
            )
        }
    }

    /// `true` when the declaration is not the stored one.
    var changed: Bool { stored != declared }

    /// `true` when every stored row must be checked against ``declared`` before the server starts.
    var checksRows: Bool { changed && declared != nil }

    /// Throws the refusal to start when the row `id` with `properties` does not fit ``declared``.
    func check(id: String, properties: [String: JSONValue]) throws(ConfigurationError) {
        guard let declared else { return }
        do {
            try declared.checkStored(properties)
        } catch {
            throw ConfigurationError(
                """
                table \(table): the stored record '\(id)' does not fit the declared columns: \(error). Serve the table \
                without columns to fix or delete such records (PUT replaces a record's properties), or declare the \
                columns to fit them
                """
            )
        }
    }

    /// The statements that drop the indexes of stored columns that are not declared now with the same type.
    func dropStatements(dialect: SQLDialect) -> [String] {
        let kept = Set(declared?.columns ?? [])
        return (stored?.columns ?? []).filter { !kept.contains($0) }.map {
            DeclaredColumnSQL.dropIndex(table: table, column: $0, dialect: dialect)
        }
    }

    /// The declared columns' indexes by name, each with the statement that creates it when missing.
    func indexes(dialect: SQLDialect) -> [(name: String, create: String)] {
        (declared?.columns ?? []).map {
            (
                DeclaredColumnSQL.indexName(table: table, column: $0),
                DeclaredColumnSQL.createIndex(table: table, column: $0, dialect: dialect)
            )
        }
    }
}
