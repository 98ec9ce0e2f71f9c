/// The Bloom filter of an ``IndexRun``: answers "certainly not in this run" for most names that are not, so
/// that looking up a new file (every file of an initial pull) reads no block of any run. Ten bits and seven
/// probes per name: about one name in a hundred that is absent still costs a block read.
///
/// Its hash is FNV-1a over the name's bytes, mixed, so it is the same in every process (Swift's `Hasher` is
/// seeded per process and cannot be stored).
struct IndexRunFilter: Equatable, Sendable {
    private(set) var words: [UInt64]
    static let bitsPerName = 10
    static let probes = 7

    /// An empty filter sized for `count` names.
    init(capacity count: Int) {
        words = [UInt64](repeating: 0, count: max(1, (count * Self.bitsPerName + 63) / 64))
    }

    /// A filter read back from its bytes (``bytes``); `nil` when they are not a whole number of words.
    init?(bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty, bytes.count % 8 == 0 else { return nil }
        var words: [UInt64] = []
        words.reserveCapacity(bytes.count / 8)
        var word: UInt64 = 0
        for (position, byte) in bytes.enumerated() {
            word |= UInt64(byte) << (8 * UInt64(position % 8))
            if position % 8 == 7 {
                words.append(word)
                word = 0
            }
        }
        self.words = words
    }

    /// Appends the filter's bytes (``bytes``) to `file` without copying them first.
    func write(to file: inout StreamedFile) throws {
        #if _endian(little)
        try words.withUnsafeBytes { try file.append($0) }
        #else
        try file.append(bytes)
        #endif
    }

    /// The filter as bytes, little-endian words.
    var bytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(words.count * 8)
        for word in words {
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return bytes
    }

    mutating func insert(_ name: some Sequence<UInt8>) {
        let bitCount = UInt64(words.count * 64)
        Self.forEachProbe(name, bitCount: bitCount) { bit in words[Int(bit / 64)] |= 1 << (bit % 64) }
    }

    /// `false` when `name` (UTF-8 bytes) was certainly never inserted.
    func mayContain(_ name: some Sequence<UInt8>) -> Bool {
        let bitCount = UInt64(words.count * 64)
        var present = true
        Self.forEachProbe(name, bitCount: bitCount) { bit in
            if words[Int(bit / 64)] & (1 << (bit % 64)) == 0 { present = false }
        }
        return present
    }

    private static func forEachProbe(_ name: some Sequence<UInt8>, bitCount: UInt64, _ body: (UInt64) -> Void) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let first = mix(hash)
        let second = mix(hash ^ 0x9e37_79b9_7f4a_7c15) | 1
        for probe in 0..<UInt64(probes) { body((first &+ probe &* second) % bitCount) }
    }

    /// SplitMix64's finaliser: spreads every input bit over the whole word.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
