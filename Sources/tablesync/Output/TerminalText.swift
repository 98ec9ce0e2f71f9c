/// Text for a terminal or a log: control characters that came from an id, a file name, a server's message or a
/// path (ESC, BEL, CR, …, which could move the cursor, recolour the terminal or hide what is printed) are written
/// as `\x1B`, and the characters that reorder text (bidirectional overrides) as `\u{202E}`, never raw. Line ends and
/// tabs stay: the output's own layout uses them.
enum TerminalText {
    /// `text` with its control and reordering characters escaped.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            result += scalar.value <= 0xFF ? "\\x" + String(repeating: "0", count: 2 - hex.count) + hex : "\\u{\(hex)}"
        }
        return result
    }

    /// C0 and C1 controls but line end and tab, DEL, and the bidirectional embeddings, overrides and isolates.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
