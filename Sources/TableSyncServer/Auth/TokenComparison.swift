/// Compares a presented token with the accepted ones in time that does not depend on where they differ, so
/// timing answers cannot guess a token byte by byte.
struct TokenComparison: Sendable {
    private let accepted: [[UInt8]]

    init(tokens: Set<String>) {
        accepted = tokens.map { Array($0.utf8) }
    }

    /// `true` when `presented` is one of the accepted tokens. Every accepted token is compared in full, whatever
    /// matched before.
    func accepts(_ presented: String) -> Bool {
        let bytes = Array(presented.utf8)
        var matches: UInt8 = 0
        for token in accepted { matches |= Self.equal(token, bytes) ? 1 : 0 }
        return matches != 0
    }

    /// Byte-wise equality that looks at every byte of the longer input and never stops early.
    static func equal(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        var difference: UInt8 = left.count == right.count ? 0 : 1
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            difference |= a ^ b
        }
        return difference == 0
    }
}
