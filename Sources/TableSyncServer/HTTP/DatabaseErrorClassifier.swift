import GRDB
import PostgresNIO

/// Tells database errors that a request caused (a `$filter` that fails on the stored data, such as a date
/// function on a malformed date or a number out of range) from server faults.
enum DatabaseErrorClassifier {
    /// A 400 for errors the request caused; `nil` for everything else.
    static func refusal(for error: any Error) -> ProtocolError? {
        if let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] {
            // Class 22: data exception (invalid datetime, division by zero, numeric overflow, ...).
            if state.hasPrefix("22") {
                let detail = error.serverInfo?[.message] ?? "data exception"
                return .badRequest("$filter cannot be evaluated on the stored records: \(detail)")
            }
        }
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_ERROR, error.message?.contains("JSON") == true {
            return .badRequest("$filter cannot be evaluated on the stored records: \(error.message ?? "")")
        }
        return nil
    }
}
