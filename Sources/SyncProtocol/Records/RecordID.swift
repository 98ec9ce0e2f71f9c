/// The rule for record ids that the table protocol allows, in one place for client and server.
///
/// An id is 1–255 characters, has no control characters, none of `" + ? \ / `` ` ``, and is neither `.` nor
/// `..`. Anything else is refused: by the server with a 400, by the client before it can become a path.
public enum RecordID {
    /// The longest id allowed, in characters.
    public static let maximumLength = 255

    /// The characters an id may not contain besides control characters.
    public static let forbiddenCharacters: Set<Character> = ["\"", "+", "?", "\\", "/", "`"]

    /// Why `id` is not a valid record id, or `nil` when it is.
    public static func problem(with id: String) -> String? {
        if id.isEmpty { return "an id cannot be empty" }
        let count = id.count
        if count > maximumLength { return "an id has at most \(maximumLength) characters; this one has \(count)" }
        if id == "." || id == ".." { return "an id cannot be \".\" or \"..\"" }
        for scalar in id.unicodeScalars {
            if scalar.properties.generalCategory == .control {
                return "an id cannot contain control characters (found U+\(String(scalar.value, radix: 16, uppercase: true)))"
            }
            if forbiddenCharacters.contains(Character(scalar)) {
                return "an id cannot contain the character \(scalar)"
            }
        }
        return nil
    }

    /// `true` when `id` follows the rule.
    public static func isValid(_ id: String) -> Bool { problem(with: id) == nil }
}
