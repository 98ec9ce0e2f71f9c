/// What a server says in words (an `error` member, a page it sent instead of JSON), made one line before the tool
/// repeats it: a line end in it is written `\n`, so that a server cannot print a line that reads as the tool's own.
/// The terminal's own escaping (ESC, CR, …) applies on top.
enum ServerText {
    /// `text` on one line.
    static func oneLine(_ text: String) -> String {
        guard text.contains(where: \.isNewline) else { return text }
        var result = ""
        for character in text {
            result += character.isNewline ? (character == "\n" ? "\\n" : "\\r\\n") : String(character)
        }
        return result
    }
}
