import Testing
@testable import TableSyncServer

/// Tokens are compared without stopping at the first differing byte, and against every accepted token.
@Suite struct TokenComparisonTests {
    static let pairs: [(left: String, right: String, equal: Bool)] = [
        ("s3cret-token", "s3cret-token", true),
        ("s3cret-token", "s3cret-tokeN", false), // the last byte
        ("s3cret-token", "x3cret-token", false), // the first byte
        ("s3cret-token", "s3cret", false), // a prefix
        ("s3cret", "s3cret-token", false), // longer
        ("s3cret", "s3cret\u{0}", false), // a zero byte beyond the end is not padding
        ("", "", true),
        ("a", "", false),
        ("é", "e\u{301}", false) // bytes, not canonical equivalence
    ]

    @Test func equalOnlyForTheSameBytes() {
        for (left, right, equal) in Self.pairs {
            #expect(
                TokenComparison.equal(Array(left.utf8), Array(right.utf8)) == equal,
                "\(left.debugDescription) vs \(right.debugDescription)")
        }
    }

    @Test func acceptsAnyConfiguredTokenAndNothingElse() {
        let comparison = TokenComparison(tokens: ["first-token", "second-token", "third"])
        for (index, token) in ["first-token", "second-token", "third"].enumerated() {
            #expect(comparison.match(token) == index)
        }
        for token in ["", "first", "second-token ", "Third", "first-tokensecond-token"] {
            #expect(comparison.match(token) == nil, "\(token)")
        }
        #expect(TokenComparison(tokens: []).match("") == nil)
    }
}
