/// A strict JSON parser (RFC 8259) that reports the line and column of the first problem.
///
/// Strict on purpose: record files are edited by hand, and a silently "repaired" file would hide a mistake.
/// It refuses a byte order mark, invalid UTF-8, duplicate object keys, trailing content and nesting deeper
/// than ``maximumDepth``, each with its own message.
///
/// ```swift
/// let value = try JSONParser.parse(Array(#"{"id": "a1"}"#.utf8))
/// ```
public enum JSONParser {
    /// Nesting deeper than this is refused, so that hostile input cannot exhaust the stack.
    public static let maximumDepth = 512

    /// Parses one JSON document from UTF-8 bytes. Throws ``JSONParseError``.
    public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        try bytes.withUnsafeBufferPointer { try parseBuffer($0) }
    }

    /// Parses one JSON document from UTF-8 bytes in a buffer. Throws ``JSONParseError``.
    public static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        try parseBuffer(buffer)
    }

    /// Parses one JSON document from a string. Throws ``JSONParseError``.
    public static func parse(_ text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { try parseBuffer($0) }
    }

    /// Parses one JSON document from UTF-8 bytes, noting whether they are known to be its canonical encoding in
    /// the pretty style: `canonical` is `true` only when `CanonicalJSON.encode(value)` gives back exactly `bytes`.
    /// It errs towards `false`: a string with an escape in it, even a canonical one, counts as not canonical.
    /// Throws ``JSONParseError``.
    package static func parseNotingLayout(_ bytes: [UInt8]) throws -> (value: JSONValue, canonical: Bool) {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONParseError) in
            var reader = Reader(bytes: buffer, notesLayout: true)
            let value = try reader.parseDocument()
            return (value, reader.layoutIsCanonical)
        }
    }

    private static func parseBuffer(_ buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var reader = Reader(bytes: buffer, notesLayout: false)
        return try reader.parseDocument()
    }
}

/// The whitespace the canonical pretty layout puts at one place between tokens (``CanonicalJSON/Style/pretty``).
private enum CanonicalSpace {
    /// None at all: before a `:` or `,`, inside an empty container, before the document.
    case nothing
    /// One space: after a member's `:`.
    case space
    /// A line end and two spaces per level: before a member or element, and before a closing bracket.
    case line(indent: Int)
    /// The final line end, after the document.
    case finalLine
}

private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    /// Whether the reader checks the bytes against the canonical pretty layout as it goes.
    let notesLayout: Bool
    /// While the layout is noted: `false` once the bytes differ from the canonical pretty layout, or may differ.
    var layoutIsCanonical: Bool

    init(bytes: UnsafeBufferPointer<UInt8>, notesLayout: Bool) {
        self.bytes = bytes
        self.notesLayout = notesLayout
        self.layoutIsCanonical = notesLayout
    }

    var atEnd: Bool { position >= bytes.count }

    /// Parses the whole text: one value, with nothing but whitespace around it.
    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            throw error(at: 0, "the text starts with a UTF-8 byte order mark; save the file without it")
        }
        skipWhitespace(canonically: .nothing)
        if atEnd { throw error(at: position, "the text is empty; expected a JSON value") }
        let value = try parseValue(depth: 0)
        skipWhitespace(canonically: .finalLine)
        if !atEnd {
            throw error(at: position, "unexpected \(describeCurrent()) after the end of the JSON value")
        }
        return value
    }

    /// Skips whitespace and, while the layout is noted, checks it is `expected`.
    mutating func skipWhitespace(canonically expected: CanonicalSpace) {
        let start = position
        skipWhitespace()
        noteWhitespace(start..<position, expected)
    }

    /// Whether the whitespace at `run` is exactly `expected`.
    func isWhitespace(_ run: Range<Int>, _ expected: CanonicalSpace) -> Bool {
        switch expected {
        case .nothing: return run.isEmpty
        case .space: return run.count == 1 && bytes[run.lowerBound] == UInt8(ascii: " ")
        case .finalLine: return run.count == 1 && bytes[run.lowerBound] == UInt8(ascii: "\n")
        case .line(let indent):
            guard run.count == 1 + 2 * indent, bytes[run.lowerBound] == UInt8(ascii: "\n") else { return false }
            return bytes[run.dropFirst()].allSatisfy { $0 == UInt8(ascii: " ") }
        }
    }

    /// Checks, while the layout is noted, that the whitespace just skipped (`run`) is `expected`, now that the next
    /// token tells which layout applies.
    mutating func noteWhitespace(_ run: Range<Int>, _ expected: CanonicalSpace) {
        if layoutIsCanonical { layoutIsCanonical = isWhitespace(run, expected) }
    }

    func error(at offset: Int, _ reason: String) -> JSONParseError {
        let reason =
            looksLikeConflictMarker(at: offset)
            ? "found a git merge conflict marker; resolve the merge conflict in this file" : reason
        var line = 1
        var lineStart = 0
        let end = min(offset, bytes.count)
        var index = 0
        while index < end {
            if bytes[index] == UInt8(ascii: "\n") {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
        // Columns count characters, not bytes: skip UTF-8 continuation bytes.
        var column = 1
        index = lineStart
        while index < end {
            if bytes[index] & 0xC0 != 0x80 { column += 1 }
            index += 1
        }
        return JSONParseError(line: line, column: column, offset: offset, reason: reason)
    }

    func describeCurrent() -> String {
        guard position < bytes.count else { return "end of text" }
        let byte = bytes[position]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        switch byte {
        case UInt8(ascii: "\r"): return "carriage return"
        case UInt8(ascii: "\t"): return "tab"
        case UInt8(ascii: " "): return "space"
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            return "byte 0x\(hex.count == 1 ? "0" + hex : hex)"
        }
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard position < bytes.count else { throw error(at: position, "unexpected end of text; expected a JSON value") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default:
            throw error(at: position, "unexpected \(describeCurrent()); expected a JSON value")
        }
    }

    /// `true` when a git merge conflict marker (`<<<<<<<`, `=======`, `>>>>>>>` at a line start) is at `offset`.
    func looksLikeConflictMarker(at offset: Int) -> Bool {
        guard offset + 7 <= bytes.count else { return false }
        let first = bytes[offset]
        guard first == UInt8(ascii: "<") || first == UInt8(ascii: "=") || first == UInt8(ascii: ">") else {
            return false
        }
        for index in 0..<7 where bytes[offset + index] != first { return false }
        return offset == 0 || bytes[offset - 1] == UInt8(ascii: "\n")
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = position
        let count = literal.utf8CodeUnitCount
        let matches = literal.withUTF8Buffer { expected in
            guard start + count <= bytes.count else { return false }
            for index in 0..<count where bytes[start + index] != expected[index] { return false }
            return true
        }
        guard matches else {
            throw error(at: start, "unexpected \(describeCurrent()); expected a JSON value")
        }
        position += count
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > JSONParser.maximumDepth {
            throw error(at: position, "nesting deeper than \(JSONParser.maximumDepth) levels")
        }
        position += 1
        // Room for a typical record's members from the start: growing 1 → 3 → 6 → 12 rehashes every member each time.
        var members = [String: JSONValue](minimumCapacity: 8)
        let opening = position
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            noteWhitespace(opening..<position, .nothing)
            position += 1
            return .object(members)
        }
        noteWhitespace(opening..<position, .line(indent: depth))
        var previousKey: String?
        while true {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error(at: position, "unexpected \(describeCurrent()); expected a member name in double quotes")
            }
            let keyOffset = position
            let key = try parseString()
            if layoutIsCanonical, let previousKey, !CanonicalJSON.keyPrecedes(previousKey, key) {
                layoutIsCanonical = false
            }
            if notesLayout { previousKey = key }
            skipWhitespace(canonically: .nothing)
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw error(at: position, "unexpected \(describeCurrent()); expected ':' after member name \"\(key)\"")
            }
            position += 1
            skipWhitespace(canonically: .space)
            let value = try parseValue(depth: depth)
            if members.updateValue(value, forKey: key) != nil {
                throw error(at: keyOffset, "duplicate member name \"\(key)\"")
            }
            let afterValue = position
            skipWhitespace()
            guard position < bytes.count else {
                throw error(at: position, "unexpected end of text; expected ',' or '}'")
            }
            switch bytes[position] {
            case UInt8(ascii: ","):
                noteWhitespace(afterValue..<position, .nothing)
                position += 1
                skipWhitespace(canonically: .line(indent: depth))
            case UInt8(ascii: "}"):
                noteWhitespace(afterValue..<position, .line(indent: depth - 1))
                position += 1
                return .object(members)
            default:
                throw error(at: position, "unexpected \(describeCurrent()); expected ',' or '}' after an object member")
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > JSONParser.maximumDepth {
            throw error(at: position, "nesting deeper than \(JSONParser.maximumDepth) levels")
        }
        position += 1
        var elements: [JSONValue] = []
        let opening = position
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            noteWhitespace(opening..<position, .nothing)
            position += 1
            return .array(elements)
        }
        noteWhitespace(opening..<position, .line(indent: depth))
        while true {
            elements.append(try parseValue(depth: depth))
            let afterValue = position
            skipWhitespace()
            guard position < bytes.count else {
                throw error(at: position, "unexpected end of text; expected ',' or ']'")
            }
            switch bytes[position] {
            case UInt8(ascii: ","):
                noteWhitespace(afterValue..<position, .nothing)
                position += 1
                skipWhitespace(canonically: .line(indent: depth))
            case UInt8(ascii: "]"):
                noteWhitespace(afterValue..<position, .line(indent: depth - 1))
                position += 1
                return .array(elements)
            default:
                throw error(at: position, "unexpected \(describeCurrent()); expected ',' or ']' after an array element")
            }
        }
    }

    mutating func parseString() throws(JSONParseError) -> String {
        let openingQuote = position
        position += 1
        let start = position
        // Fast path: no escapes; plain ASCII needs no UTF-8 validation.
        var allBytes: UInt8 = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                if allBytes < 0x80 {
                    position += 1
                    return String(decoding: slice, as: UTF8.self)
                }
                guard let text = String(validating: slice, as: UTF8.self) else {
                    throw error(at: firstInvalidUTF8(from: start, to: position), "invalid UTF-8 in a string")
                }
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 {
                throw error(at: position, "control character \(describeCurrent()) inside a string; escape it")
            }
            allBytes |= byte
            position += 1
        }
        guard position < bytes.count else { throw error(at: openingQuote, "string is never closed") }
        // An escape may or may not be the one the canonical form writes: the layout is no longer known canonical.
        layoutIsCanonical = false
        var utf8 = Array(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw error(at: firstInvalidUTF8(from: start, to: position), "invalid UTF-8 in a string")
                }
                position += 1
                return text
            case UInt8(ascii: "\\"):
                try parseEscape(into: &utf8)
            case 0..<0x20:
                throw error(at: position, "control character \(describeCurrent()) inside a string; escape it")
            default:
                utf8.append(byte)
                position += 1
            }
        }
        throw error(at: openingQuote, "string is never closed")
    }

    func firstInvalidUTF8(from start: Int, to end: Int) -> Int {
        var index = start
        while index < end {
            let byte = bytes[index]
            let length: Int
            switch byte {
            case 0..<0x80: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: return index
            }
            if index + length > end { return index }
            let sequence = UnsafeBufferPointer(rebasing: bytes[index..<(index + length)])
            if String(validating: sequence, as: UTF8.self) == nil { return index }
            index += length
        }
        return start
    }

    mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONParseError) {
        let escapeStart = position
        position += 1
        guard position < bytes.count else { throw error(at: escapeStart, "string is never closed") }
        let byte = bytes[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""): utf8.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): utf8.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): utf8.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4(escapeStart: escapeStart)
            if (0xD800..<0xDC00).contains(scalar) {
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw error(at: escapeStart, "unpaired UTF-16 surrogate in a \\u escape") }
                position += 2
                let low = try parseHex4(escapeStart: escapeStart)
                guard (0xDC00..<0xE000).contains(low) else {
                    throw error(at: escapeStart, "unpaired UTF-16 surrogate in a \\u escape")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error(at: escapeStart, "unpaired UTF-16 surrogate in a \\u escape")
            }
            guard let unicode = Unicode.Scalar(scalar) else {
                throw error(at: escapeStart, "invalid \\u escape")
            }
            utf8.append(contentsOf: String(Character(unicode)).utf8)
        default:
            throw error(at: escapeStart, "invalid escape '\\\(Character(Unicode.Scalar(byte)))' in a string")
        }
    }

    mutating func parseHex4(escapeStart: Int) throws(JSONParseError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw error(at: escapeStart, "incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error(at: escapeStart, "invalid \\u escape: expected four hexadecimal digits")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = position
        var isInteger = true
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count, isDigit(bytes[position]) else {
            throw error(at: start, "invalid number: expected a digit after '-'")
        }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) {
                throw error(at: start, "invalid number: leading zeros are not allowed")
            }
        } else {
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else {
                throw error(at: start, "invalid number: expected a digit after the decimal point")
            }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else {
                throw error(at: start, "invalid number: expected a digit in the exponent")
            }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isInteger, let integer = Int64(text) {
            // Leading zeros are refused, so only `-0` is spelled otherwise than canonically.
            if layoutIsCanonical && text == "-0" { layoutIsCanonical = false }
            return .integer(integer)
        }
        guard let double = Double(text), double.isFinite else {
            throw error(at: start, "number \(text) is out of range")
        }
        if layoutIsCanonical && CanonicalJSON.canonicalNumber(double) != text { layoutIsCanonical = false }
        return .double(double)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
