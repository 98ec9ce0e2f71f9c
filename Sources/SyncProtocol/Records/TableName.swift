/// The rule for table names, shared by client (directory names) and server (URL paths and SQL tables).
///
/// A table name is 1–128 characters of ASCII letters, digits, `_` and `-`, starting with a letter or digit.
/// Names are case-sensitive on the wire; a store refuses two tables whose names differ only in case,
/// because they would share a directory on macOS.
public enum TableName {
    /// The longest table name allowed.
    public static let maximumLength = 128

    /// Why `name` is not a valid table name, or `nil` when it is.
    public static func problem(with name: String) -> String? {
        if name.isEmpty { return "a table name cannot be empty" }
        if name.utf8.count > maximumLength { return "a table name has at most \(maximumLength) characters" }
        for (index, byte) in name.utf8.enumerated() {
            let isAlphanumeric = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            if isAlphanumeric { continue }
            if index > 0 && (byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")) { continue }
            return "a table name may contain only ASCII letters, digits, '_' and '-', and must start with a letter or digit: \"\(name)\""
        }
        return nil
    }

    /// `true` when `name` follows the rule.
    public static func isValid(_ name: String) -> Bool { problem(with: name) == nil }
}
