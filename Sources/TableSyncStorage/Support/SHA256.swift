import Crypto

/// SHA-256 content hashes for the status index and the hashed names of long ids, as lowercase hex.
///
/// Computed by swift-crypto (BoringSSL's assembly on Linux, with the CPU's SHA extensions where it has them;
/// CryptoKit on Apple platforms). Not used for anything secret.
package enum SHA256 {
    /// The lowercase hexadecimal digest of `bytes`.
    package static func hexDigest(of bytes: [UInt8]) -> String {
        hex(Crypto.SHA256.hash(data: bytes))
    }

    private static func hex(_ digest: Crypto.SHA256.Digest) -> String {
        let hexDigits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 2 * Crypto.SHA256.byteCount) { text in
            hexDigits.withUTF8Buffer { digits in
                var offset = 0
                for byte in digest {
                    text[offset] = digits[Int(byte >> 4)]
                    text[offset + 1] = digits[Int(byte & 0xF)]
                    offset += 2
                }
            }
            return 2 * Crypto.SHA256.byteCount
        }
    }
}
