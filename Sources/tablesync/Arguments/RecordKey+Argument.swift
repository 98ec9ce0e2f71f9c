import ArgumentParser
import TableSync

/// `resolve`'s record argument.
extension RecordKey {
    /// The record named on the command line as `TABLE/ID` (the form `tablesync conflicts` prints), split at the
    /// first `/`: ids never hold one. A transform for `@Argument`, so a name without `/` is bad usage (exit 2).
    init(tableSlashID text: String) throws {
        guard let slash = text.firstIndex(of: "/") else { throw ValidationError("name the record as TABLE/ID") }
        self.init(table: String(text[..<slash]), id: String(text[text.index(after: slash)...]))
    }
}
