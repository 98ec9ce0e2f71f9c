import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// The SQL text and bindings `$filter` trees translate to, per dialect: values are always bound.
@Suite("$filter to SQL")
struct FilterSQLTranslatorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let expression: FilterExpression
        let sqlite: String
        let postgres: String
        let bindings: [SQLValue]
        var testDescription: String { sqlite }
    }

    static let text = FilterExpression.property("text")
    static let id = FilterExpression.property("id")
    static let updatedAt = FilterExpression.property("updatedAt")

    static let cases: [Case] = [
        Case(
            expression: .binary(.eq, id, .literal(.string("a'b"))),
            sqlite: "(id = ?1)", postgres: "(id COLLATE \"C\" = $1)", bindings: [.text("a'b")]),
        Case(
            expression: .binary(.ne, text, .literal(.string("a"))),
            sqlite: "((CASE WHEN json_type(body, ?2) = 'text' THEN json_extract(body, ?3) END) IS NOT ?1)",
            postgres: "((CASE WHEN jsonb_typeof(body -> $2) = 'string' THEN body ->> $2 END) IS DISTINCT FROM $1)",
            bindings: [.text("a"), .text("$.\"text\""), .text("$.\"text\"")]),
        Case(
            expression: .binary(.gt, updatedAt, .literal(.dateTime(Timestamp(ticks: 5)))),
            sqlite: "(updated_at > ?1)", postgres: "(updated_at > $1)", bindings: [.integer(5)]),
        Case(
            expression: .binary(.eq, text, .literal(.null)),
            sqlite: "(COALESCE(json_type(body, ?1), 'null') IN ('null', 'object', 'array'))",
            postgres: "(COALESCE(jsonb_typeof(body -> $1), 'null') IN ('null', 'object', 'array'))",
            bindings: [.text("$.\"text\"")]),
        Case(
            expression: .binary(.lt, .property("n"), .literal(.integer(3))),
            sqlite:
                """
                COALESCE((CASE WHEN json_type(body, ?2) IN ('integer', 'real') THEN json_extract(body, ?3) END) < ?1, \
                FALSE)
                """,
            postgres:
                """
                COALESCE((CASE WHEN jsonb_typeof(body -> $2) = 'number' THEN CAST(body ->> $2 AS DOUBLE PRECISION) \
                END) < $1, FALSE)
                """,
            bindings: [.integer(3), .text("$.\"n\""), .text("$.\"n\"")]),
        Case(
            expression: .unary(.not, .property("done")),
            sqlite: "(NOT (CASE json_type(body, ?1) WHEN 'true' THEN TRUE WHEN 'false' THEN FALSE END))",
            postgres: "(NOT (CASE WHEN jsonb_typeof(body -> $1) = 'boolean' THEN CAST(body ->> $1 AS BOOLEAN) END))",
            bindings: [.text("$.\"done\"")]),
        Case(
            expression: .binary(
                .or, .binary(.gt, updatedAt, .literal(.dateTime(Timestamp(ticks: 7)))),
                .binary(
                    .and, .binary(.eq, updatedAt, .literal(.dateTime(Timestamp(ticks: 7)))),
                    .binary(.gt, id, .literal(.string("k"))))),
            sqlite: "((updated_at, id) > (?1, ?2))", postgres: "((updated_at, id) > ($1, $2))",
            bindings: [.integer(7), .text("k")]),
        // Not the keyset cursor (two instants): an ordinary OR.
        Case(
            expression: .binary(
                .or, .binary(.gt, updatedAt, .literal(.dateTime(Timestamp(ticks: 7)))),
                .binary(
                    .and, .binary(.eq, updatedAt, .literal(.dateTime(Timestamp(ticks: 8)))),
                    .binary(.gt, id, .literal(.string("k"))))),
            sqlite: "((updated_at > ?1) OR ((updated_at = ?2) AND (id > ?3)))",
            postgres: "((updated_at > $1) OR ((updated_at = $2) AND (id COLLATE \"C\" > $3)))",
            bindings: [.integer(7), .integer(8), .text("k")]),
        Case(
            expression: .function(.startswith, [id, .literal(.string("a%_"))]),
            sqlite: "(substr(id, 1, length(?1)) = ?1)", postgres: "(starts_with(id, $1))",
            bindings: [.text("a%_")]),
        Case(
            expression: .in(id, [.literal(.string("a")), .literal(.string("b"))]),
            sqlite: "COALESCE(id IN (?1, ?2), FALSE)", postgres: "COALESCE(id COLLATE \"C\" IN ($1, $2), FALSE)",
            bindings: [.text("a"), .text("b")])
    ]

    @Test("translation per dialect", arguments: cases)
    func translation(_ testCase: Case) throws {
        let sqlite = try FilterSQLTranslator.translate(testCase.expression, dialect: .sqlite)
        let postgres = try FilterSQLTranslator.translate(testCase.expression, dialect: .postgres)
        #expect(sqlite.sql == testCase.sqlite)
        #expect(postgres.sql == testCase.postgres)
        // SQLite binds a JSON path where PostgreSQL binds the bare name; otherwise the values are the same.
        #expect(Self.unique(postgres.bindings) == Self.unique(testCase.bindings))
        #expect(Self.unique(sqlite.bindings) == Self.unique(testCase.bindings))
    }

    static func unique(_ values: [SQLValue]) -> [SQLValue] {
        var seen: [SQLValue] = []
        for value in values.map(\.withoutPath) where !seen.contains(value) { seen.append(value) }
        return seen
    }

    @Test(
        "untranslatable filters are refused with a reason",
        arguments: [
            (FilterExpression.binary(.eq, .property("version"), .literal(.string("x"))), "version"),
            (.binary(.eq, .property("a;b"), .literal(.integer(1))), "a;b"),
            (.binary(.eq, .property("id"), .literal(.integer(1))), "cannot compare"),
            (.binary(.add, .property("n"), .literal(.integer(1))), "condition"),
            (.function(.length, []), "length"),
            (.function(.year, [.literal(.integer(3))]), "year"),
            (
                .function(.isof, [.function(.length, [.property("text")]), .literal(.string("Edm.Double"))]),
                "isof() tests a property"
            ),
            (.function(.isof, [.property("n"), .literal(.string("Edm.Int32"))]), "isof() takes a type"),
            (.function(.replace, [.property("text"), .literal(.string("a"))]), "replace() takes 3 arguments")
        ])
    func refusals(expression: FilterExpression, word: String) {
        for dialect in [SQLDialect.sqlite, .postgres] {
            #expect {
                _ = try FilterSQLTranslator.translate(expression, dialect: dialect)
            } throws: { error in
                (error as? FilterTranslationError)?.reason.contains(word) == true
            }
        }
    }
}

extension SQLValue {
    /// SQLite binds a JSON path (`$."name"`) where PostgreSQL binds the bare name.
    var isPath: Bool { if case .text(let text) = self { return text.hasPrefix("$.\"") } else { return false } }

    var withoutPath: SQLValue {
        if case .text(let text) = self, text.hasPrefix("$.\""), text.hasSuffix("\"") {
            return .text(String(text.dropFirst(3).dropLast()))
        }
        return self
    }
}
