import Crypto

/// SHA-256 for the hashed names of long ids, as lowercase hex.
///
/// Computed by swift-crypto (BoringSSL's assembly on Linux, with the CPU's SHA extensions where it has them;
/// CryptoKit on Apple platforms). Not used for anything secret.
package enum SHA256 {
    /// The lowercase hexadecimal digest of `bytes`.
    package static func hexDigest(of bytes: [UInt8]) -> String {
        LowercaseHex.string(of: Array(Crypto.SHA256.hash(data: bytes)))
    }
}

/// Bytes spelled as lowercase hexadecimal digits, two a byte.
enum LowercaseHex {
    static func string(of bytes: [UInt8]) -> String {
        let hexDigits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 2 * bytes.count) { text in
            hexDigits.withUTF8Buffer { digits in
                for (offset, byte) in bytes.enumerated() {
                    text[2 * offset] = digits[Int(byte >> 4)]
                    text[2 * offset + 1] = digits[Int(byte & 0xF)]
                }
            }
            return 2 * bytes.count
        }
    }
}
