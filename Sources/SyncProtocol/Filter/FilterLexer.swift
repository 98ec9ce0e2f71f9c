/// One token of a `$filter` text, with the 1-based column (in Unicode scalars) where it starts.
struct FilterToken: Equatable {
    enum Kind: Equatable {
        /// A name: a property, a function, an operator or a keyword; the parser decides which.
        case word(String)
        /// An unsigned number as written without its suffix; `isDecimal` when it has a fraction, an
        /// exponent or a decimal suffix, so it must stay a double.
        case number(String, isDecimal: Bool)
        /// A quoted string with `''` already unescaped.
        case string(String)
        /// `datetime'…'`, `datetimeoffset'…'` or a bare ISO 8601 date-time.
        case dateTime(Timestamp)
        /// A bare `yyyy-MM-dd`, in ``EdmValueText/date(_:)``'s form.
        case date(String)
        /// A bare `HH:mm[:ss[.f…]]`, in ``EdmValueText/timeOfDay(_:)``'s form.
        case timeOfDay(String)
        /// A bare guid, in lowercase.
        case guid(String)
        case openParenthesis, closeParenthesis, comma, minus, dot
        case end
    }

    let kind: Kind
    let column: Int
}

/// Splits a `$filter` text into tokens. Literals are recognised here, because only the lexer sees
/// whether a quote directly follows a word (`datetime'…'`) or whether a number is really a date.
struct FilterLexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    /// Tokenises `scalars`; the last token is always `.end`.
    static func tokens(_ scalars: [Unicode.Scalar]) throws(FilterParseError) -> [FilterToken] {
        var lexer = FilterLexer(scalars: scalars)
        var tokens: [FilterToken] = []
        repeat {
            tokens.append(try lexer.next())
        } while tokens.last?.kind != .end
        return tokens
    }

    private init(scalars: [Unicode.Scalar]) { self.scalars = scalars }

    private var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    private func error(at index: Int, _ reason: String) -> FilterParseError {
        FilterParseError(column: index + 1, reason: reason)
    }

    private mutating func next() throws(FilterParseError) -> FilterToken {
        while let scalar = current, Self.isWhitespace(scalar) { index += 1 }
        let start = index
        guard let scalar = current else { return FilterToken(kind: .end, column: start + 1) }
        let kind: FilterToken.Kind
        switch scalar {
        case "(":
            index += 1
            kind = .openParenthesis
        case ")":
            index += 1
            kind = .closeParenthesis
        case ",":
            index += 1
            kind = .comma
        case "-":
            index += 1
            kind = .minus
        case ".":
            index += 1
            kind = .dot
        case "'": kind = .string(try readString())
        case _ where EdmValueText.startsGuid(scalars, at: index):
            kind = .guid(String(String.UnicodeScalarView(scalars[index..<index + 36])).lowercased())
            index += 36
        case "0"..."9":
            if startsDateTime() {
                kind = .dateTime(try readBareDateTime())
            } else if starts("dddd-dd-dd") {
                kind = .date(try readBare("dddd-dd-dd".count, as: "date", EdmValueText.date, form: "yyyy-MM-dd"))
            } else if starts("dd:dd") {
                let length = scalars[index...].prefix { ("0"..."9").contains($0) || $0 == ":" || $0 == "." }.count
                kind = .timeOfDay(
                    try readBare(length, as: "time of day", EdmValueText.timeOfDay, form: "HH:mm[:ss[.fffffff]]"))
            } else {
                kind = try readNumber()
            }
        default:
            guard Self.isWordStart(scalar) else {
                throw error(at: start, "unexpected character '\(Self.visible(scalar))'\(Self.hint(for: scalar))")
            }
            let word = readWord()
            if current == "'" {
                kind = .dateTime(try readPrefixedDateTime(prefix: word, at: start))
            } else {
                kind = .word(word)
            }
        }
        return FilterToken(kind: kind, column: start + 1)
    }

    /// Reads `'…'` with `''` standing for one quote.
    private mutating func readString() throws(FilterParseError) -> String {
        let start = index
        index += 1
        var text = String.UnicodeScalarView()
        while true {
            guard let scalar = current else {
                throw error(at: start, "unterminated string; a quote inside a string is written ''")
            }
            index += 1
            if scalar == "'" {
                guard current == "'" else { return String(text) }
                index += 1
            }
            text.append(scalar)
        }
    }

    private mutating func readWord() -> String {
        var word = String.UnicodeScalarView()
        while let scalar = current, Self.isWordStart(scalar) || ("0"..."9").contains(scalar) {
            word.append(scalar)
            index += 1
        }
        return String(word)
    }

    /// Reads the quoted part of `datetime'…'` or `datetimeoffset'…'` (prefix in any case).
    private mutating func readPrefixedDateTime(prefix: String, at start: Int) throws(FilterParseError) -> Timestamp {
        let lowered = prefix.lowercased()
        guard lowered == "datetime" || lowered == "datetimeoffset" else {
            // `'it's'`: the word is really the rest of a string with an undoubled quote.
            if start > 0, scalars[start - 1] == "'" {
                throw error(at: start - 1, "the string ends here; a quote inside a string is written ''")
            }
            if lowered == "geography" || lowered == "geometry" { throw error(at: start, FilterParseError.noGeography) }
            throw error(at: start, "unsupported literal \(prefix)'…'; use a 'string', a number or datetimeoffset'…'")
        }
        let text = try readString()
        guard let timestamp = Self.timestamp(text) else {
            throw error(at: start, "invalid date-time '\(text)'; \(Self.dateTimeForm)")
        }
        return timestamp
    }

    /// `true` when a bare v4 date-time (`2024-01-02T…`) starts here rather than a number.
    private func startsDateTime() -> Bool {
        let pattern: [Character] = ["d", "d", "d", "d", "-", "d", "d", "-", "d", "d", "T"]
        guard index + pattern.count <= scalars.count else { return false }
        for (offset, expected) in pattern.enumerated() {
            let scalar = scalars[index + offset]
            switch expected {
            case "d": guard ("0"..."9").contains(scalar) else { return false }
            case "T": guard scalar == "T" || scalar == "t" else { return false }
            default: guard Character(scalar) == expected else { return false }
            }
        }
        return true
    }

    /// `true` when `pattern` (``EdmValueText/matches(_:_:)``'s) starts here and no letter or digit follows it.
    private func starts(_ pattern: String) -> Bool {
        let end = index + pattern.unicodeScalars.count
        guard end <= scalars.count, EdmValueText.matches(scalars[index..<end], pattern) else { return false }
        guard end < scalars.count else { return true }
        return !(Self.isWordStart(scalars[end]) || ("0"..."9").contains(scalars[end]))
    }

    /// Reads the next `length` scalars as a bare `what`, in the canonical form `read` gives.
    private mutating func readBare(
        _ length: Int, as what: String, _ read: (String) -> String?, form: String
    ) throws(FilterParseError) -> String {
        let start = index
        let text = String(String.UnicodeScalarView(scalars[index..<index + length]))
        index += length
        guard let canonical = read(text) else { throw error(at: start, "invalid \(what) '\(text)'; expected \(form)") }
        return canonical
    }

    private mutating func readBareDateTime() throws(FilterParseError) -> Timestamp {
        let start = index
        var text = String.UnicodeScalarView()
        while let scalar = current, Self.isDateTimeScalar(scalar) {
            text.append(scalar)
            index += 1
        }
        guard let timestamp = Self.timestamp(String(text)) else {
            throw error(at: start, "invalid date-time '\(String(text))'; \(Self.dateTimeForm)")
        }
        return timestamp
    }

    /// Reads `digits [. digits] [e [±] digits] [suffix]`, the OData forms of Edm.Int32/Int64/Decimal/Double.
    private mutating func readNumber() throws(FilterParseError) -> FilterToken.Kind {
        let start = index
        var text = String.UnicodeScalarView()
        var isDecimal = false
        readDigits(into: &text)
        if current == "." {
            text.append(".")
            index += 1
            guard readDigits(into: &text) else { throw error(at: index, "expected digits after the decimal point") }
            isDecimal = true
        }
        if current == "e" || current == "E" {
            text.append("e")
            index += 1
            if let sign = current, sign == "+" || sign == "-" {
                text.append(sign)
                index += 1
            }
            guard readDigits(into: &text) else { throw error(at: index, "expected digits in the exponent") }
            isDecimal = true
        }
        if let suffix = current, "mMdDfF".unicodeScalars.contains(suffix) {
            index += 1
            isDecimal = true
        } else if let suffix = current, suffix == "l" || suffix == "L" {
            guard !isDecimal else { throw error(at: index, "the suffix 'L' is only for integers") }
            index += 1
        }
        if let after = current, Self.isWordStart(after) || ("0"..."9").contains(after) {
            throw error(
                at: index,
                "unexpected '\(after)' after the number \(String(scalars[start..<index].map(Character.init)))")
        }
        return .number(String(text), isDecimal: isDecimal)
    }

    /// Appends a run of ASCII digits; `false` when there was none.
    @discardableResult
    private mutating func readDigits(into text: inout String.UnicodeScalarView) -> Bool {
        let start = index
        while let scalar = current, ("0"..."9").contains(scalar) {
            text.append(scalar)
            index += 1
        }
        return index > start
    }

    private static let dateTimeForm =
        "expected yyyy-MM-ddTHH:mm[:ss[.fffffff]] followed by Z or an offset such as +01:00"

    /// A date-time without a zone is taken as UTC: the protocol's servers store UTC, and OData v3 clients
    /// send `datetime'2024-01-02T03:04:05'` meaning exactly that.
    private static func timestamp(_ text: String) -> Timestamp? {
        Timestamp(parsing: text) ?? Timestamp(parsing: text + "Z")
    }

    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }

    private static func isWordStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic
    }

    private static func isDateTimeScalar(_ scalar: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(scalar) || ":.+-TtZz".unicodeScalars.contains(scalar)
    }

    /// The character itself, or an escape for control characters that would not show in a message.
    private static func visible(_ scalar: Unicode.Scalar) -> String {
        scalar.properties.generalCategory == .control ? scalar.escaped(asASCII: true) : String(scalar)
    }

    /// A nudge for people who write C or SQL operators instead of OData's words.
    private static func hint(for scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "=": return "; equality is written 'eq'"
        case "<", ">", "!": return "; comparisons are written eq, ne, gt, ge, lt, le"
        case "&", "|": return "; logic is written 'and', 'or', 'not'"
        case "+", "*", "/", "%": return "; arithmetic is written add, sub, mul, div, mod"
        case "\"": return "; strings are quoted with single quotes"
        default: return ""
        }
    }
}
