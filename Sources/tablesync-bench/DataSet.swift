import SyncProtocol

/// The records every benchmark uses: deterministic (record `n` is the same on every run and machine), about
/// 500 bytes as a canonical record file, with 12 properties of mixed types besides the system properties:
/// short and long strings (some with non-ASCII text and characters that need escaping), integers, doubles
/// with and without a short spelling, a boolean, a date string, an array and a nullable reference.
struct DataSet {
    let count: Int

    private static let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
        "sierra", "tango", "uniform", "victor", "whiskey", "x-ray", "yankee", "zulu",
        "café", "naïve", "\"quoted\"", "tab\there"
    ]
    private static let categories = ["inbox", "errands", "work", "home", "garden", "finance", "travel", "health"]

    /// The id of record `index`: UUID-shaped lowercase hex, as clients usually generate them.
    func id(_ index: Int) -> String {
        var random = SplitMix64(seed: UInt64(index) &* 0x9E37_79B9 &+ 17)
        let high = random.next()
        let low = random.next()
        let hex = String(high, radix: 16).leftPadded(to: 16) + String(low, radix: 16).leftPadded(to: 16)
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }

    /// Record `index` as a client would insert it (with its `id`, without the server's system properties).
    func record(_ index: Int) -> [String: JSONValue] {
        var random = SplitMix64(seed: UInt64(index) &+ 0xC0FFEE)
        func sentence(_ wordCount: Int) -> String {
            (0..<wordCount).map { _ in Self.words[random.below(Self.words.count)] }.joined(separator: " ")
        }
        let month = 1 + random.below(12)
        let day = 1 + random.below(28)
        let hour = random.below(24)
        let minute = random.below(60)
        return [
            SystemProperty.id: .string(id(index)),
            "title": .string(sentence(4 + random.below(3))),
            "notes": .string(sentence(18 + random.below(8))),
            "category": .string(Self.categories[random.below(Self.categories.count)]),
            "owner": .string("user-\(random.below(5000))"),
            "priority": .integer(Int64(random.below(5))),
            "quantity": .integer(Int64(random.below(100_000))),
            "price": .double(Double(random.below(1_000_000)) / 100),
            "score": .double(Double(random.next() >> 11) / Double(1 << 53)),
            "complete": .bool(random.below(2) == 0),
            "dueDate": .string(
                "2025-\(month.twoDigits)-\(day.twoDigits)T\(hour.twoDigits):\(minute.twoDigits):00.000Z"),
            "tags": .array(
                (0..<(1 + random.below(4))).map { _ in .string(Self.categories[random.below(Self.categories.count)]) }),
            "parentId": random.below(2) == 0 ? .null : .string(id(random.below(max(count, 1))))
        ]
    }
}

/// A small, fast, seedable generator (Steele, Lea and Flood's SplitMix64): the same seed gives the same
/// sequence everywhere, unlike the system generator.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

extension String {
    func leftPadded(to length: Int) -> String { String(repeating: "0", count: max(0, length - count)) + self }
}

extension Int {
    var twoDigits: String { String(self).leftPadded(to: 2) }
}
