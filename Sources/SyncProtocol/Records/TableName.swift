/// The rule for table names, shared by client (directory names) and server (URL paths and SQL tables).
///
/// A table name is 1–64 characters of ASCII letters, digits, `_` and `-`, starting with a letter. The server
/// matches names in URLs without regard to case, and a store refuses two tables whose names differ only in case
/// (they would share a directory on macOS).
public enum TableName {
    /// The longest table name allowed.
    public static let maximumLength = 64

    /// Why `name` is not a valid table name, or `nil` when it is.
    public static func problem(with name: String) -> String? {
        if name.isEmpty { return "a table name cannot be empty" }
        if name.utf8.count > maximumLength { return "a table name has at most \(maximumLength) characters" }
        for (index, byte) in name.utf8.enumerated() {
            let isAlphanumeric =
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            let isLetter =
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            if isAlphanumeric && (index > 0 || isLetter) { continue }
            if index > 0 && (byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")) { continue }
            return
                """
                a table name may contain only ASCII letters, digits, '_' and '-', and must start with a letter: \
                \"\(name)\"
                """
        }
        return nil
    }

    /// `true` when `name` follows the rule.
    public static func isValid(_ name: String) -> Bool { problem(with: name) == nil }
}
