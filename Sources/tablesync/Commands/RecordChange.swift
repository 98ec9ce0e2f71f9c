import ArgumentParser
import SyncProtocol
import TableSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `insert` and `update` share: the record given as JSON on the command line, and the change made with it.
enum RecordChange {
    /// The JSON object in `text`, or read from standard input when `text` is `-`. Not an object is bad usage.
    static func parseRecord(_ text: String) throws -> [String: JSONValue] {
        var bytes = Array(text.utf8)
        if text == "-" {
            bytes = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(0, &buffer, buffer.count)
                if count <= 0 { break }
                bytes.append(contentsOf: buffer[0..<count])
            }
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch let error as JSONParseError {
            throw ValidationError("the record is not valid JSON: \(error)")
        }
        guard case .object(let record) = value else {
            throw ValidationError("the record must be a JSON object, not \(value.typeName)")
        }
        return record
    }

    /// Applies `change` to the record in `recordText` in `table`, and prints the record as stored.
    static func run(
        global: GlobalOptions, table: String, recordText: String, verb: String,
        change: @escaping @Sendable (SyncTable, [String: JSONValue]) async throws -> [String: JSONValue]
    ) async throws {
        let record = try parseRecord(recordText)
        let context = try await SyncContext.open(directory: global.store, purpose: "tablesync \(verb)")
        let stored = try await change(try await context.table(table), record)
        if global.json {
            CommandOutput.printJSON(.object(stored))
        } else {
            CommandOutput.printText(
                """
                \(verb == "insert" ? "Inserted" : "Updated") \(table)/\(stored["id"]?.stringValue ?? "") (queued for \
                push).
                """
            )
        }
    }
}
