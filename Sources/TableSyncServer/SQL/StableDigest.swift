/// A 64-bit FNV-1a digest as 16 lowercase hex digits: stable across runs, processes and machines (Swift's `Hasher`
/// is seeded per process), for names and tags that only have to change when their input does. Not for secrets.
enum StableDigest {
    /// The digest of `bytes`.
    static func hex<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
