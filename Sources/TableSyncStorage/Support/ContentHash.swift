import Crypto

/// The content hash of a record file, as the stat index, the synced writes and the push compare it: git's blob id of
/// the file's bytes (the SHA-1 of `blob <size>` and a NUL before them), in lowercase hex.
///
/// Git's own name for the bytes, so that a file git's index vouches for (its `stat` matches the index entry of a
/// blob) is indexed with the hash its bytes would give without reading them (``GitIndexFile``). Used to tell
/// whether bytes changed, never to authenticate them: git keeps SHA-1 for the same purpose. A repository that
/// names its objects by SHA-256 gets no such shortcut, and its files are read.
package enum ContentHash {
    /// The hash of `bytes`.
    package static func of(_ bytes: [UInt8]) -> String {
        var hasher = Insecure.SHA1()
        hasher.update(data: Array("blob \(bytes.count)\0".utf8))
        hasher.update(data: bytes)
        return LowercaseHex.string(of: Array(hasher.finalize()))
    }

    /// The raw 20 bytes of a hash, `nil` when `hash` is not 40 lowercase hex digits (an entry's sentinel, such as
    /// ``StatIndex/Entry/editedWhileSent``).
    package static func rawBytes(of hash: String) -> [UInt8]? {
        var hash = hash
        return hash.withUTF8(rawBytes)
    }

    /// ``rawBytes(of:)-(String)`` of a hash's UTF-8 bytes.
    package static func rawBytes(of digits: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard digits.count == 40 else { return nil }
        var raw: [UInt8] = []
        raw.reserveCapacity(20)
        for pair in stride(from: 0, to: 40, by: 2) {
            guard let high = value(ofDigit: digits[pair]), let low = value(ofDigit: digits[pair + 1]) else {
                return nil
            }
            raw.append(high << 4 | low)
        }
        return raw
    }

    private static func value(ofDigit digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// The hash spelled from its raw 20 bytes.
    package static func hex(_ raw: some Collection<UInt8>) -> String {
        LowercaseHex.string(of: Array(raw))
    }
}
