/// Cuts a run of operations into batches: the rule that decides which operations share a request.
///
/// Batches keep journal order and are as full as the limits allow: at most `maxOperations` operations, and at
/// most `maxBytes` bytes of encoded operations. An operation larger than `maxBytes` on its own still goes, alone
/// in its batch (the server's body limit then decides; cutting it would change what is sent).
///
/// ```swift
/// BatchSplit.ranges(sizes: [40, 40, 40], maxOperations: 2, maxBytes: 100)   // [0..<2, 2..<3]
/// BatchSplit.ranges(sizes: [60, 60], maxOperations: 10, maxBytes: 100)      // [0..<1, 1..<2]
/// ```
enum BatchSplit {
    /// The batches of operations whose encoded sizes are `sizes`, as consecutive index ranges covering them all.
    static func ranges(sizes: [Int], maxOperations: Int, maxBytes: Int) -> [Range<Int>] {
        precondition(maxOperations > 0 && maxBytes > 0, "batch limits must be positive")
        var ranges: [Range<Int>] = []
        var start = 0
        var bytes = 0
        for (index, size) in sizes.enumerated() {
            let count = index - start
            if count > 0 && (count == maxOperations || bytes + size > maxBytes) {
                ranges.append(start..<index)
                start = index
                bytes = 0
            }
            bytes += size
        }
        if start < sizes.count { ranges.append(start..<sizes.count) }
        return ranges
    }
}
