/// Names of record properties as queries may use them in `$filter`, `$orderby` and `$select`.
public enum PropertyName {
    /// `true` when `name` is a plain identifier: an ASCII letter or `_`, then ASCII letters, digits or `_`, at
    /// most 128 characters. Only such names reach a query, so none needs quoting anywhere.
    public static func isPlain(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 128 else { return false }
        func isLetter(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
        return isLetter(first)
            && name.utf8.allSatisfy { isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
