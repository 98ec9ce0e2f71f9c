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
        if isPlainASCII(id) { return nil }
        if id.isEmpty { return "an id cannot be empty" }
        let count = id.count
        if count > maximumLength { return "an id has at most \(maximumLength) characters; this one has \(count)" }
        if id == "." || id == ".." { return "an id cannot be \".\" or \"..\"" }
        for scalar in id.unicodeScalars {
            if scalar.properties.generalCategory == .control {
                return
                    """
                    an id cannot contain control characters (found \
                    U+\(String(scalar.value, radix: 16, uppercase: true)))
                    """
            }
            if forbiddenCharacters.contains(Character(scalar)) {
                return "an id cannot contain the character \(scalar)"
            }
        }
        return nil
    }

    /// The common case, decided on bytes alone: 1–255 printable ASCII characters, none forbidden, not `.` or
    /// `..`. `false` sends the id through the full rule (which also finds the reason).
    private static func isPlainASCII(_ id: String) -> Bool {
        let bytes = id.utf8
        guard (1...maximumLength).contains(bytes.count), id != ".", id != ".." else { return false }
        return bytes.allSatisfy { byte in
            byte >= 0x20 && byte < 0x7F && !forbiddenASCII[Int(byte)]
        }
    }

    /// ``forbiddenCharacters`` as a table indexed by ASCII code.
    private static let forbiddenASCII: [Bool] = (0..<128).map {
        forbiddenCharacters.contains(Character(Unicode.Scalar(UInt8($0))))
    }

    /// `true` when `id` follows the rule.
    public static func isValid(_ id: String) -> Bool { problem(with: id) == nil }
}
