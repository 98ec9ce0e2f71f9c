import SyncProtocol
@testable import TableSyncServer
import Testing

/// The rules of declared columns as pure functions: the schema's parsing and validation, the typed SQL of a column
/// and its index, the translation of a comparison on it, and what a start does when the declaration changed.
@Suite("Declared columns: rules")
struct DeclaredColumnsTests {
    static let schema: TableSchema = {
        do {
            return try TableSchema(parsing: "text:string;done:boolean;due:date;rank:number")
        } catch {
            preconditionFailure("\(error)")
        }
    }()

    @Test("a declaration reads name:type;… and has one spelling, columns in name order")
    func parsing() throws {
        #expect(Self.schema.text == "done:boolean;due:date;rank:number;text:string")
        #expect(try TableSchema(parsing: Self.schema.text) == Self.schema)
        #expect(Self.schema.column(named: "rank")?.type == .number)
        // A name matches its column in any case and is given the declared spelling.
        #expect(Self.schema.column(named: "RANK")?.name == "rank")
        #expect(Self.schema.declaredSpelling("Rank") == "rank")
        #expect(Self.schema.declaredSpelling("UpdatedAt") == "UpdatedAt")
        #expect(Self.schema.column(named: "ranks") == nil)
    }

    @Test(
        "a bad declaration is refused, naming the column",
        arguments: [
            ("", "expected name:type in the columns, found ''"),
            ("text", "expected name:type in the columns, found 'text'"),
            ("text:string;", "expected name:type in the columns, found ''"),
            (
                "text:varchar",
                "the column 'text' has the unknown type 'varchar'; use string, number, boolean, date, dateonly"
            ),
            ("a:string;a:number", "the column 'a' is declared twice"),
            ("updatedAt:date", "'updatedAt' is a system property; the server manages it and it cannot be declared"),
            ("Deleted:boolean", "'Deleted' is a system property; the server manages it and it cannot be declared"),
            (
                "a-b:string",
                """
                the column name 'a-b' is not a plain property name (ASCII letters, digits and _, not starting with a \
                digit)
                """
            )
        ])
    func badDeclarations(text: String, message: String) {
        #expect(throws: ConfigurationError(message)) { try TableSchema(parsing: text) }
    }

    static let valid: [([String: JSONValue], [String: JSONValue])] = [
        (["text": "milk", "done": false, "rank": 2.5], ["text": "milk", "done": false, "rank": 2.5]),
        (
            ["rank": .integer(7), "text": .null, "done": .null, "due": .null],
            ["rank": .integer(7), "text": .null, "done": .null, "due": .null]
        ),
        ([:], [:]),
        (["due": "2024-05-01T12:20:30+02:00"], ["due": "2024-05-01T10:20:30.000Z"]),
        (["due": "2024-05-01T10:20Z"], ["due": "2024-05-01T10:20:00.000Z"]),
        (["due": "2024-05-01T10:20:30.1230000Z"], ["due": "2024-05-01T10:20:30.123Z"]),
        (["due": "1969-12-31T23:59:59.999z"], ["due": "1969-12-31T23:59:59.999Z"]),
        // Names match in any case and are stored in the declared spelling.
        (
            ["RANK": 3, "Text": "milk", "dUe": "2024-05-01T10:20Z"],
            ["rank": 3, "text": "milk", "due": "2024-05-01T10:20:00.000Z"]
        )
    ]

    @Test("validation: declared properties of their type or null; dates stored canonically", arguments: valid)
    func validation(properties: [String: JSONValue], stored: [String: JSONValue]) throws {
        #expect(try Self.schema.validate(properties) == stored)
    }

    static let invalid: [([String: JSONValue], String)] = [
        (
            ["colour": "red", "text": 5],
            """
            the property 'colour' is not declared; the declared columns are done (boolean), due (date), rank (number), \
            text (string)
            """
        ),
        (["text": 5], "the property 'text' must be a string, or null, not a number"),
        (["TEXT": 5], "the property 'text' must be a string, or null, not a number"),
        (
            ["text": "a", "Text": "b"],
            "the property 'text' is given twice, as 'Text' and 'text'; send it once, as text"
        ),
        (["rank": "5"], "the property 'rank' must be a number, or null, not a string"),
        (["done": 1], "the property 'done' must be true or false, or null, not a number"),
        (["done": ["a"]], "the property 'done' must be true or false, or null, not an array"),
        (["text": ["a": 1]], "the property 'text' must be a string, or null, not an object"),
        (["due": 5], "the property 'due' must be a date such as 2024-05-01T10:20:30.123Z, or null, not a number"),
        (
            ["due": "tomorrow"],
            "the property 'due' must be a date such as 2024-05-01T10:20:30.123Z, or null, not 'tomorrow'"
        ),
        (
            ["due": "2024-02-30T00:00:00Z"],
            "the property 'due' must be a date such as 2024-05-01T10:20:30.123Z, or null, not '2024-02-30T00:00:00Z'"
        ),
        (
            ["due": "2024-05-01T10:20:30.1234Z"],
            """
            the property 'due' has more precision than a millisecond ('2024-05-01T10:20:30.1234Z'); dates are stored \
            as yyyy-MM-ddTHH:mm:ss.fffZ
            """
        )
    ]

    @Test("validation refuses, naming the property", arguments: invalid)
    func violations(properties: [String: JSONValue], message: String) {
        #expect(throws: SchemaViolation.self) { try Self.schema.validate(properties) }
        do {
            _ = try Self.schema.validate(properties)
        } catch {
            #expect("\(error)" == message)
        }
    }

    @Test("a stored row fits only in the stored form")
    func storedRows() throws {
        try Self.schema.checkStored(["due": "2024-05-01T10:20:30.000Z", "rank": 1])
        #expect(
            throws: SchemaViolation(
                property: "due",
                problem: #"holds "2024-05-01T10:20:30Z", not the form the column stores ("2024-05-01T10:20:30.000Z")"#)
        ) {
            try Self.schema.checkStored(["due": "2024-05-01T10:20:30Z"])
        }
        #expect(throws: SchemaViolation.self) { try Self.schema.checkStored(["rank": true]) }
        #expect(throws: SchemaViolation(property: "Rank", problem: "is spelled unlike its column, 'rank'")) {
            try Self.schema.checkStored(["Rank": 1])
        }
    }

    static let rank = Self.schema.column(named: "rank")!
    static let text = Self.schema.column(named: "text")!
    static let done = Self.schema.column(named: "done")!
    static let due = Self.schema.column(named: "due")!

    @Test("the typed expression of a column, per dialect")
    func typedExpressions() {
        #expect(DeclaredColumnSQL.value(Self.rank, dialect: .sqlite) == #"json_extract(body, '$."rank"')"#)
        #expect(DeclaredColumnSQL.value(Self.done, dialect: .sqlite) == #"json_extract(body, '$."done"')"#)
        #expect(DeclaredColumnSQL.value(Self.text, dialect: .postgres) == "(body ->> 'text')")
        #expect(DeclaredColumnSQL.value(Self.due, dialect: .postgres) == "(body ->> 'due')")
        // PostgreSQL's casts are guarded: the index is built over every version of the table's rows, fitting or not.
        #expect(
            DeclaredColumnSQL.value(Self.rank, dialect: .postgres)
                == """
                (CASE WHEN jsonb_typeof(body -> 'rank') = 'number' THEN CAST(body ->> 'rank' AS DOUBLE PRECISION) \
                END)
                """
        )
        #expect(
            DeclaredColumnSQL.value(Self.done, dialect: .postgres)
                == "(CASE WHEN jsonb_typeof(body -> 'done') = 'boolean' THEN CAST(body ->> 'done' AS BOOLEAN) END)")
        #expect(
            DeclaredColumnSQL.ordering(Self.text, descending: false, dialect: .postgres)
                == #"(body ->> 'text') COLLATE "C" ASC NULLS FIRST"#)
        #expect(
            DeclaredColumnSQL.ordering(Self.rank, descending: true, dialect: .sqlite)
                == #"json_extract(body, '$."rank"') DESC"#)
    }

    @Test("the index of a column: on exactly the typed expression, over the table's rows")
    func indexes() {
        let name = DeclaredColumnSQL.indexName(table: "todo", column: Self.rank)
        #expect(name.hasPrefix("tablesync_column_") && name.utf8.count == 33)
        #expect(
            name != DeclaredColumnSQL.indexName(table: "todo", column: try! DeclaredColumn(name: "rank", type: .string))
        )
        #expect(name != DeclaredColumnSQL.indexName(table: "todo2", column: Self.rank))
        #expect(
            DeclaredColumnSQL.createIndex(table: "todo", column: Self.rank, dialect: .sqlite)
                == #"CREATE INDEX IF NOT EXISTS \#(name) ON tablesync_records (json_extract(body, '$."rank"'), id) "#
                + #"WHERE table_name = 'todo'"#
        )
        #expect(
            DeclaredColumnSQL.createIndex(table: "todo", column: Self.rank, dialect: .postgres)
                == """
                CREATE INDEX CONCURRENTLY IF NOT EXISTS \(name) ON tablesync_records (((CASE WHEN \
                jsonb_typeof(body -> 'rank') = 'number' THEN CAST(body ->> 'rank' AS DOUBLE PRECISION) END)) NULLS \
                FIRST, id) WHERE table_name = 'todo'
                """
        )
        #expect(
            DeclaredColumnSQL.createIndex(table: "todo", column: Self.text, dialect: .postgres).contains(
                #"(((body ->> 'text')) COLLATE "C" NULLS FIRST, id)"#))
        #expect(DeclaredColumnSQL.literal("it's") == "'it''s'")
    }

    @Test(
        "a comparison of a stored date with a literal between milliseconds keeps the instants' answer",
        arguments: [
            (FilterBinaryOperator.gt, "2024-05-01T10:20:30.0005Z", ">", "2024-05-01T10:20:30.000Z"),
            (.ge, "2024-05-01T10:20:30.0005Z", ">=", "2024-05-01T10:20:30.001Z"),
            (.lt, "2024-05-01T10:20:30.0005Z", "<", "2024-05-01T10:20:30.001Z"),
            (.le, "2024-05-01T10:20:30.0005Z", "<=", "2024-05-01T10:20:30.000Z"),
            (.ge, "2024-05-01T12:20:30+02:00", ">=", "2024-05-01T10:20:30.000Z"),
            (.eq, "2024-05-01T10:20:30.999Z", "=", "2024-05-01T10:20:30.999Z"),
            (.lt, "1969-12-31T23:59:59.9995Z", "<", "1970-01-01T00:00:00.000Z")
        ])
    func storedDateBounds(op: FilterBinaryOperator, literal: String, sqlOperator: String, text: String) throws {
        let instant = try #require(Timestamp(parsing: literal))
        let bound = try #require(FilterSQLTranslator.storedDateBound(op, instant))
        #expect(bound.operator == sqlOperator)
        #expect(bound.text == text)
    }

    @Test("no stored date equals an instant between milliseconds")
    func storedDateNeverEqual() throws {
        let instant = try #require(Timestamp(parsing: "2024-05-01T10:20:30.0005Z"))
        #expect(FilterSQLTranslator.storedDateBound(.eq, instant) == nil)
    }

    static let rankPostgres =
        "(CASE WHEN jsonb_typeof(body -> 'rank') = 'number' THEN CAST(body ->> 'rank' AS DOUBLE PRECISION) END)"

    @Test(
        "a comparison on a declared column is written for its index",
        arguments: [
            (
                "rank gt 5", #"(json_extract(body, '$."rank"') > ?1 AND json_extract(body, '$."rank"') IS NOT NULL)"#,
                "(\(Self.rankPostgres) > $1 AND \(Self.rankPostgres) IS NOT NULL)"
            ),
            (
                "text eq 'a'", #"(json_extract(body, '$."text"') = ?1 AND json_extract(body, '$."text"') IS NOT NULL)"#,
                #"((body ->> 'text') COLLATE "C" = $1 AND (body ->> 'text') IS NOT NULL)"#
            ),
            ("rank ne 5", #"(json_extract(body, '$."rank"') IS NOT ?1)"#, "(\(Self.rankPostgres) IS DISTINCT FROM $1)"),
            // The date literal's ticks are bound as ?1 before the comparison knows it compares text.
            (
                "due ge 2024-05-01T10:20:30.0005Z",
                #"(json_extract(body, '$."due"') >= ?2 AND json_extract(body, '$."due"') IS NOT NULL)"#,
                #"((body ->> 'due') COLLATE "C" >= $2 AND (body ->> 'due') IS NOT NULL)"#
            ),
            (
                "not done", #"(NOT json_extract(body, '$."done"'))"#,
                "(NOT (CASE WHEN jsonb_typeof(body -> 'done') = 'boolean' THEN CAST(body ->> 'done' AS BOOLEAN) END))"
            )
        ])
    func declaredComparisons(filter: String, sqlite: String, postgres: String) throws {
        let expression = try FilterParser.parse(filter)
        let sqliteSQL = try FilterSQLTranslator.translate(expression, schema: Self.schema, dialect: .sqlite).sql
        #expect(sqliteSQL == sqlite)
        let postgresSQL = try FilterSQLTranslator.translate(expression, schema: Self.schema, dialect: .postgres).sql
        #expect(postgresSQL == postgres)
    }

    @Test("a property that is not declared cannot be filtered on")
    func undeclaredFilter() throws {
        #expect(
            throws: FilterTranslationError(
                """
                'colour' is not a column of this table; its columns are done (boolean), due (date), rank (number), \
                text (string)
                """
            )
        ) {
            try FilterSQLTranslator.translate(
                try FilterParser.parse("colour eq 'red'"), schema: Self.schema, dialect: .sqlite)
        }
        #expect(throws: FilterTranslationError.self) {
            try FilterSQLTranslator.translate(
                try FilterParser.parse("due gt updatedAt"), schema: Self.schema, dialect: .postgres)
        }
    }

    @Test("a start checks rows only when the declaration changed, and drops only the indexes that changed")
    func transitions() throws {
        let old = try TableSchema(parsing: "rank:number;text:string")
        let new = try TableSchema(parsing: "rank:string;text:string")
        let unchanged = try SchemaTransition(table: "todo", storedText: old.text, declared: old)
        #expect(!unchanged.changed && !unchanged.checksRows && unchanged.dropStatements(dialect: .postgres).isEmpty)
        #expect(
            unchanged.indexes(dialect: .sqlite).map(\.create).allSatisfy { $0.hasPrefix("CREATE INDEX IF NOT EXISTS") })

        let retyped = try SchemaTransition(table: "todo", storedText: old.text, declared: new)
        #expect(retyped.changed && retyped.checksRows)
        let oldRank = DeclaredColumnSQL.indexName(
            table: "todo", column: try DeclaredColumn(name: "rank", type: .number))
        #expect(retyped.dropStatements(dialect: .sqlite) == ["DROP INDEX IF EXISTS \(oldRank)"])
        #expect(retyped.dropStatements(dialect: .postgres) == ["DROP INDEX CONCURRENTLY IF EXISTS \(oldRank)"])
        #expect(
            retyped.indexes(dialect: .postgres).map(\.name)
                == [
                    DeclaredColumnSQL.indexName(table: "todo", column: try DeclaredColumn(name: "rank", type: .string)),
                    DeclaredColumnSQL.indexName(table: "todo", column: try DeclaredColumn(name: "text", type: .string))
                ])

        let removed = try SchemaTransition(table: "todo", storedText: old.text, declared: nil)
        #expect(removed.changed && !removed.checksRows)
        #expect(removed.dropStatements(dialect: .sqlite).count == 2 && removed.indexes(dialect: .sqlite).isEmpty)

        let first = try SchemaTransition(table: "todo", storedText: nil, declared: old)
        #expect(first.checksRows && first.dropStatements(dialect: .sqlite).isEmpty)
        #expect(throws: ConfigurationError.self) { try first.check(id: "a", properties: ["rank": "high"]) }
        try first.check(id: "a", properties: ["rank": 1])
        #expect(throws: ConfigurationError.self) {
            try SchemaTransition(table: "todo", storedText: "rank:int", declared: old)
        }
    }
}
