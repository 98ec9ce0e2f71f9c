import SyncProtocol

/// The reversible mapping between a record id and the name of its file under `tables/<Table>/`.
///
/// The name is the id with every character outside `[a-z0-9_.-]` spelled out, plus `.json`:
/// - an ASCII capital letter becomes `^` and its lowercase letter (`Todo` → `^todo`), so that ids differing only
///   in case never share a file on a case-insensitive file system;
/// - every other character becomes `%XX` for each byte of its UTF-8 form, uppercase hex (`é` → `%C3%A9`),
///   so names are plain ASCII and Unicode normalisation by the file system cannot change them;
/// - a leading `.` is spelled `%2E` (no hidden files, no `.`/`..`), and a name that Windows reserves
///   (`con`, `nul`, `com1`, …) gets its first character spelled out.
/// An id whose spelled-out name would pass the 255-byte name limit gets a hashed name instead: the first
/// 150 bytes of the spelled-out name, `~`, and the SHA-256 of the id in hex. `~` never occurs otherwise, so the
/// two forms cannot collide; the real id of a hashed name is read from the file.
package enum RecordFileName {
    /// The extension of every record file.
    static let fileExtension = ".json"
    /// The longest file name most file systems allow, in bytes.
    static let maximumNameLength = 255

    private static let reservedWindowsNames: Set<String> = {
        var names: Set<String> = ["con", "prn", "aux", "nul"]
        for digit in 1...9 {
            names.insert("com\(digit)")
            names.insert("lpt\(digit)")
        }
        return names
    }()

    /// The file name for `id`, which must satisfy ``RecordID``.
    package static func fileName(for id: String) -> String {
        var encoded: [UInt8] = []
        encoded.reserveCapacity(id.utf8.count + 8)
        let escapeFirst = id.utf8.first == UInt8(ascii: ".") || isReservedOnWindows(id)
        for (index, byte) in id.utf8.enumerated() {
            switch byte {
            case _ where isUnescaped(byte):
                if index == 0 && escapeFirst {
                    appendPercent(byte, to: &encoded)
                } else {
                    encoded.append(byte)
                }
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                encoded.append(UInt8(ascii: "^"))
                encoded.append(byte + 32)
            default:
                appendPercent(byte, to: &encoded)
            }
        }
        let encodedName = String(decoding: encoded, as: UTF8.self)
        if encoded.count + fileExtension.utf8.count <= maximumNameLength {
            return encodedName + fileExtension
        }
        var prefix = Substring(encodedName.prefix(150))
        // Never cut an escape in half.
        if let percent = prefix.suffix(2).firstIndex(of: "%") { prefix = prefix[..<percent] }
        if prefix.hasSuffix("^") { prefix = prefix.dropLast() }
        return prefix + "~" + SHA256.hexDigest(of: Array(id.utf8)) + fileExtension
    }

    /// `true` when `id`, up to its first `.`, is a name Windows reserves in any case (`con`, `NUL.txt`, `com1.x`).
    static func isReservedOnWindows(_ id: String) -> Bool {
        // At most five bytes are looked at: a longer stem is none of these names.
        let stem = id.utf8.prefix(5).prefix { $0 != UInt8(ascii: ".") }
        guard (3...4).contains(stem.count) else { return false }
        return reservedWindowsNames.contains(String(decoding: stem, as: UTF8.self).lowercased())
    }

    /// The id a file name stands for; `nil` for a hashed name (read the id from the file) or for a name this
    /// mapping never produces.
    package static func id(forFileName name: String) -> String? {
        guard name.hasSuffix(fileExtension) else { return nil }
        let stem = name.utf8.dropLast(fileExtension.utf8.count)
        // The common case: a name that spells nothing out is its id's own (no leading dot, no name Windows
        // reserves, short enough), and such an id is valid (printable ASCII, none forbidden, not `.` or `..`).
        if !stem.isEmpty, stem.first != UInt8(ascii: "."), stem.allSatisfy(isUnescaped),
            name.utf8.count <= maximumNameLength
        {
            let id = String(decoding: stem, as: UTF8.self)
            if !isReservedOnWindows(id) { return id }
        }
        guard !isHashed(name) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(stem.count)
        var iterator = stem.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "^"):
                guard let letter = iterator.next(), (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(letter) else {
                    return nil
                }
                bytes.append(letter - 32)
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        guard let id = String(validating: bytes, as: UTF8.self), RecordID.isValid(id), fileName(for: id) == name else {
            return nil
        }
        return id
    }

    /// Whether the file name `name`, as a listing holds it, stands for an id (``id(forFileName:)`` gives one),
    /// told without a String for a name that spells its id as it is, as clients' ids (UUIDs) are spelled.
    static func spellsAnID(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let stem = name.dropLast(extensionBytes.count)
        if name.count > extensionBytes.count, name.count <= maximumNameLength,
            name.suffix(extensionBytes.count).elementsEqual(extensionBytes), stem.first != UInt8(ascii: "."),
            stem.allSatisfy(isUnescaped),
            !(3...4).contains(stem.prefix(5).prefix { $0 != UInt8(ascii: ".") }.count)
        {
            return true
        }
        return id(forFileName: String(decoding: name, as: UTF8.self)) != nil
    }

    /// `true` for the bytes a file name spells as they are: `[a-z0-9_.-]`.
    private static func isUnescaped(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"),
            UInt8(ascii: "-"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// `true` when `name` is the hashed form used for long ids.
    static func isHashed(_ name: String) -> Bool { name.utf8.contains(UInt8(ascii: "~")) }

    /// `true` when `name` could be a record file name (it ends in `.json` and is not a temporary or hidden file).
    package static func looksLikeRecordFile(_ name: String) -> Bool {
        var name = name
        return name.withUTF8(looksLikeRecordFile)
    }

    /// ``looksLikeRecordFile(_:)-(String)`` on a name's UTF-8 bytes, as a directory listing holds them.
    package static func looksLikeRecordFile(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        !isHidden(name) && name.count >= extensionBytes.count
            && name.suffix(extensionBytes.count).elementsEqual(extensionBytes)
    }

    /// `true` when the name starts with a dot (hidden, or one of the store's temporary files).
    static func isHidden(_ name: UnsafeBufferPointer<UInt8>) -> Bool { name.first == UInt8(ascii: ".") }

    private static let extensionBytes = Array(fileExtension.utf8)

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func appendPercent(_ byte: UInt8, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "%"))
        bytes.append(hexDigits[Int(byte >> 4)])
        bytes.append(hexDigits[Int(byte & 0xF)])
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
