/// The one way TableSync writes JSON, so that the same value always gives the same bytes on every platform.
///
/// The rules (documented in `docs/formats.md`):
/// - Object keys in ascending order of their UTF-8 bytes (the same as Unicode code point order), never
///   dependent on the platform's string collation.
/// - ``Style/pretty``: two-space indent, `": "` between name and value, one member or element per line,
///   `{}` and `[]` for empty containers, `\n` line ends and a final newline. ``Style/compact``: no whitespace
///   at all and no final newline (one journal line).
/// - Strings: `"` and `\` escaped with a backslash; U+0008, U+0009, U+000A, U+000C, U+000D as `\b \t \n \f \r`;
///   other control characters below U+0020 as `\u00xx` (lowercase hex); everything else as literal UTF-8.
/// - Numbers: every number equal to a 64-bit integer in plain decimal (`1.0` is written `1`, `1e16` is written
///   `10000000000000000`), so equal numbers share one spelling; the rest in the shortest form that reads back to
///   the same `Double` (Swift's algorithm, identical on every platform), such as `0.1`, `1e-07`, `1.5e+300`.
///   Non-finite numbers cannot occur in JSON and are written as `null`.
public enum CanonicalJSON {
    /// The layout of the output.
    public enum Style: Sendable {
        /// Indented, one member per line, with a final newline: record, config and conflict files.
        case pretty
        /// One line without whitespace and without a newline: journal lines and request bodies.
        case compact
    }

    /// The canonical bytes of `value`.
    public static func encode(_ value: JSONValue, style: Style = .pretty) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(512)
        append(value, style: style, to: &output)
        return output
    }

    /// The canonical bytes (``Style/pretty``) of the object `members` with the member `extra` added, without
    /// copying `members`: the same bytes as encoding the object with `extra` set in it.
    package static func encode(
        _ members: [String: JSONValue], adding extra: (key: String, value: JSONValue)
    ) -> [UInt8] {
        guard members[extra.key] == nil else {
            var members = members
            members[extra.key] = extra.value
            return encode(.object(members))
        }
        var output: [UInt8] = []
        output.reserveCapacity(512)
        writePrettyObject(members, adding: extra, indent: 0, to: &output)
        output.append(UInt8(ascii: "\n"))
        return output
    }

    /// The canonical text of `value`.
    public static func string(_ value: JSONValue, style: Style = .pretty) -> String {
        String(decoding: encode(value, style: style), as: UTF8.self)
    }

    /// Appends the canonical bytes of `value` to `output` (with the final newline in the pretty style).
    public static func append(_ value: JSONValue, style: Style, to output: inout [UInt8]) {
        switch style {
        case .pretty:
            writePretty(value, indent: 0, to: &output)
            output.append(UInt8(ascii: "\n"))
        case .compact:
            writeCompact(value, to: &output)
        }
    }

    /// `true` when `a` sorts before `b` in canonical key order: their UTF-8 bytes compared as unsigned numbers, a
    /// prefix first. Compared in their contiguous storage, which a native string has.
    public static func keyPrecedes(_ a: String, _ b: String) -> Bool {
        var (a, b) = (a, b)
        return a.withUTF8 { a in
            b.withUTF8 { b in
                for index in 0..<min(a.count, b.count) where a[index] != b[index] { return a[index] < b[index] }
                return a.count < b.count
            }
        }
    }

    /// Where each member of `members` is, in canonical order (each found again by its index, not its key).
    ///
    /// Keys are ordered by their first eight UTF-8 bytes read as one big-endian number, which orders two keys as
    /// their bytes do whenever those eight bytes differ (a key shorter than eight bytes is padded with zeros, which
    /// sort first, as a prefix does); only keys that share them are compared whole. Most property names differ
    /// within eight bytes, so sorting costs integer comparisons rather than string ones.
    static func canonicalOrder(of members: [String: JSONValue]) -> [Dictionary<String, JSONValue>.Index] {
        var order = members.indices.map { (leading: leadingBytes(of: members[$0].key), index: $0) }
        order.sort { first, second in
            first.leading != second.leading
                ? first.leading < second.leading : keyPrecedes(members[first.index].key, members[second.index].key)
        }
        return order.map(\.index)
    }

    /// The first eight UTF-8 bytes of `key` as a big-endian number, zeros after a shorter key's last byte.
    static func leadingBytes(of key: String) -> UInt64 {
        var key = key
        return key.withUTF8 { bytes in
            var leading: UInt64 = 0
            for index in 0..<8 { leading = leading << 8 | UInt64(index < bytes.count ? bytes[index] : 0) }
            return leading
        }
    }

    private static func writePretty(_ value: JSONValue, indent: Int, to output: inout [UInt8]) {
        switch value {
        case .array(let elements):
            if elements.isEmpty {
                output.append(contentsOf: [UInt8(ascii: "["), UInt8(ascii: "]")])
                return
            }
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent: indent + 1, to: &output)
                writePretty(element, indent: indent + 1, to: &output)
            }
            newline(indent: indent, to: &output)
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            writePrettyObject(members, adding: nil, indent: indent, to: &output)
        default:
            writeScalar(value, to: &output)
        }
    }

    /// Writes the object `members`, with `extra` as one more member when it is given (a key `members` lacks).
    private static func writePrettyObject(
        _ members: [String: JSONValue], adding extra: (key: String, value: JSONValue)?, indent: Int,
        to output: inout [UInt8]
    ) {
        if members.isEmpty && extra == nil {
            output.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")])
            return
        }
        output.append(UInt8(ascii: "{"))
        var first = true
        func write(_ key: String, _ member: JSONValue) {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            newline(indent: indent + 1, to: &output)
            writeString(key, to: &output)
            output.append(UInt8(ascii: ":"))
            output.append(UInt8(ascii: " "))
            writePretty(member, indent: indent + 1, to: &output)
        }
        var extra = extra
        for index in canonicalOrder(of: members) {
            let (key, member) = members[index]
            if let pending = extra, keyPrecedes(pending.key, key) {
                write(pending.key, pending.value)
                extra = nil
            }
            write(key, member)
        }
        if let pending = extra { write(pending.key, pending.value) }
        newline(indent: indent, to: &output)
        output.append(UInt8(ascii: "}"))
    }

    private static func writeCompact(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                writeCompact(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            var first = true
            for index in canonicalOrder(of: members) {
                let (key, member) = members[index]
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                writeCompact(member, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        default:
            writeScalar(value, to: &output)
        }
    }

    private static func newline(indent: Int, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\n"))
        for _ in 0..<(indent * 2) { output.append(UInt8(ascii: " ")) }
    }

    private static func writeScalar(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .integer(let integer): output.append(contentsOf: String(integer).utf8)
        case .double(let double): output.append(contentsOf: canonicalNumber(double).utf8)
        case .string(let text): writeString(text, to: &output)
        case .array, .object: preconditionFailure("containers are written by the caller")
        }
    }

    /// The canonical spelling of a double (see the type's documentation).
    public static func canonicalNumber(_ double: Double) -> String {
        guard double.isFinite else { return "null" }
        if let exact = JSONValue.exactInteger(double) {
            return String(exact)
        }
        return double.description
    }

    private static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if runStart < index {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                }
                runStart = index + 1
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x09: output.append(UInt8(ascii: "t"))
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                default:
                    let hexDigits = Array("0123456789abcdef".utf8)
                    output.append(contentsOf: [
                        UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                        hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]
                    ])
                }
            }
            if runStart < bytes.count {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
