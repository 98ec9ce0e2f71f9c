extension String {
    /// Whether the text holds a control character (Unicode category Cc: U+0000–U+001F, U+007F–U+009F), which
    /// ids and versions may not: decided on the bytes while they are ASCII, so the common case looks up no
    /// Unicode property.
    public var containsControlCharacter: Bool {
        for byte in utf8 {
            if byte < 0x20 || byte == 0x7F { return true }
            if byte >= 0x80 { return unicodeScalars.contains { $0.properties.generalCategory == .control } }
        }
        return false
    }
}
