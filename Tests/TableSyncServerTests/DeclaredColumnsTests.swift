import SyncProtocol
@testable import TableSyncServer
import Testing

/// The rules of declared columns as pure functions: the schema's parsing and validation.
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
        #expect(Self.schema.column(named: "Rank") == nil)
    }

    @Test("a bad declaration is refused, naming the column", arguments: [
        ("", "expected name:type in the columns, found ''"),
        ("text", "expected name:type in the columns, found 'text'"),
        ("text:string;", "expected name:type in the columns, found ''"),
        ("text:varchar", "the column 'text' has the unknown type 'varchar'; use string, number, boolean, date"),
        ("a:string;a:number", "the column 'a' is declared twice"),
        ("updatedAt:date", "'updatedAt' is a system property; the server manages it and it cannot be declared"),
        ("Deleted:boolean", "'Deleted' is a system property; the server manages it and it cannot be declared"),
        ("a-b:string", "the column name 'a-b' is not a plain property name (ASCII letters, digits and _, not starting with a digit)"),
    ])
    func badDeclarations(text: String, message: String) {
        #expect(throws: ConfigurationError(message)) { try TableSchema(parsing: text) }
    }

    static let valid: [([String: JSONValue], [String: JSONValue])] = [
        (["text": "milk", "done": false, "rank": 2.5], ["text": "milk", "done": false, "rank": 2.5]),
        (["rank": .integer(7), "text": .null, "done": .null, "due": .null], ["rank": .integer(7), "text": .null, "done": .null, "due": .null]),
        ([:], [:]),
        (["due": "2024-05-01T12:20:30+02:00"], ["due": "2024-05-01T10:20:30.000Z"]),
        (["due": "2024-05-01T10:20Z"], ["due": "2024-05-01T10:20:00.000Z"]),
        (["due": "2024-05-01T10:20:30.1230000Z"], ["due": "2024-05-01T10:20:30.123Z"]),
        (["due": "1969-12-31T23:59:59.999z"], ["due": "1969-12-31T23:59:59.999Z"]),
    ]

    @Test("validation: declared properties of their type or null; dates stored canonically", arguments: valid)
    func validation(properties: [String: JSONValue], stored: [String: JSONValue]) throws {
        #expect(try Self.schema.validate(properties) == stored)
    }

    static let invalid: [([String: JSONValue], String)] = [
        (["colour": "red", "text": 5],
         "the property 'colour' is not declared; the declared columns are done (boolean), due (date), rank (number), text (string)"),
        (["text": 5], "the property 'text' must be a string, or null, not a number"),
        (["rank": "5"], "the property 'rank' must be a number, or null, not a string"),
        (["done": 1], "the property 'done' must be true or false, or null, not a number"),
        (["done": ["a"]], "the property 'done' must be true or false, or null, not an array"),
        (["text": ["a": 1]], "the property 'text' must be a string, or null, not an object"),
        (["due": 5], "the property 'due' must be a date such as 2024-05-01T10:20:30.123Z, or null, not a number"),
        (["due": "tomorrow"], "the property 'due' must be a date such as 2024-05-01T10:20:30.123Z, or null, not 'tomorrow'"),
        (["due": "2024-02-30T00:00:00Z"], "the property 'due' must be a date such as 2024-05-01T10:20:30.123Z, or null, not '2024-02-30T00:00:00Z'"),
        (["due": "2024-05-01T10:20:30.1234Z"],
         "the property 'due' has more precision than a millisecond ('2024-05-01T10:20:30.1234Z'); dates are stored as yyyy-MM-ddTHH:mm:ss.fffZ"),
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
        #expect(throws: SchemaViolation(property: "due", problem: #"holds "2024-05-01T10:20:30Z", not the form the column stores ("2024-05-01T10:20:30.000Z")"#)) {
            try Self.schema.checkStored(["due": "2024-05-01T10:20:30Z"])
        }
        #expect(throws: SchemaViolation.self) { try Self.schema.checkStored(["rank": true]) }
    }
}
