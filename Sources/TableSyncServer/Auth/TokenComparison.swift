/// Compares a presented token with the accepted ones in time that does not depend on where they differ, so
/// timing answers cannot guess a token byte by byte.
struct TokenComparison: Sendable {
    private let accepted: [[UInt8]]

    init(tokens: [String]) {
        accepted = tokens.map { Array($0.utf8) }
    }

    /// The position of `presented` among the accepted tokens, or `nil`. Every accepted token is compared in full,
    /// whatever matched before.
    func match(_ presented: String) -> Int? {
        let bytes = Array(presented.utf8)
        var found = -1
        for (index, token) in accepted.enumerated() where Self.equal(token, bytes) && found < 0 { found = index }
        return found < 0 ? nil : found
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
