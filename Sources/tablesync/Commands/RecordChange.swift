import ArgumentParser
import SyncProtocol
import TableSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the JSON object given on the command line (or `-` for standard input).
func parseRecordArgument(_ text: String) throws -> [String: JSONValue] {
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

/// Runs a change to one record given as JSON on the command line, and prints the record as stored.
func runRecordChange(global: GlobalOptions, table: String, recordText: String, verb: String,
                     change: @escaping @Sendable (SyncTable, [String: JSONValue]) async throws -> [String: JSONValue]) async throws {
    try await CommandOutput.run(json: global.json) {
        let record = try parseRecordArgument(recordText)
        let context = try SyncContext(directory: global.store, purpose: "tablesync \(verb)")
        let stored = try await change(try await context.table(table), record)
        if global.json {
            CommandOutput.printJSON(.object(stored))
        } else {
            print("\(verb == "insert" ? "Inserted" : "Updated") \(table)/\(stored["id"]?.stringValue ?? "") (queued for push).")
        }
        return .done
    }
}
