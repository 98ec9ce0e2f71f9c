import Testing
@testable import TableSync

/// Which operations share a batch: by count and by bytes, in journal order.
struct BatchSplitTests {
    @Test(
        "batches by count and bytes",
        arguments: [
            // sizes, maxOperations, maxBytes, expected batches
            ([Int](), 3, 100, [Range<Int>]()),
            ([10], 3, 100, [0..<1]),
            ([10, 10, 10, 10, 10, 10, 10], 3, 100, [0..<3, 3..<6, 6..<7]),
            ([10, 10, 10], 3, 100, [0..<3]),
            ([40, 40, 40], 10, 100, [0..<2, 2..<3]),
            ([50, 50, 50], 10, 100, [0..<2, 2..<3]),
            ([60, 60], 10, 100, [0..<1, 1..<2]),
            ([150, 10, 10], 10, 100, [0..<1, 1..<3]),
            ([10, 150, 10], 10, 100, [0..<1, 1..<2, 2..<3]),
            ([1, 1, 1, 1], 1, 100, [0..<1, 1..<2, 2..<3, 3..<4]),
            ([30, 30, 30, 30, 30], 2, 70, [0..<2, 2..<4, 4..<5])
        ])
    func ranges(sizes: [Int], maxOperations: Int, maxBytes: Int, expected: [Range<Int>]) {
        let ranges = BatchSplit.ranges(sizes: sizes, maxOperations: maxOperations, maxBytes: maxBytes)
        #expect(ranges == expected)
        // Every operation is in exactly one batch, in order.
        #expect(ranges.flatMap { Array($0) } == Array(sizes.indices))
    }

    /// The push sizes batches by the encoded operations and sends those bytes: a change to the operation after
    /// encoding (a `client-wins` retry on the server's version) must not send the stale encoding.
    @Test func anEncodedBatchMemberIsDroppedWhenTheOperationChanges() {
        let pending = PendingOperation(sequence: 1, kind: .insert, table: "todo", id: "a")
        var outgoing = OutgoingOperation(
            operation: pending, sent: ["id": "a", "text": "milk"], sentFile: nil, baseVersion: nil)
        outgoing.encodeBatchMember(apiVersion: 3)
        #expect(
            outgoing.batchMember.map { String(decoding: $0, as: UTF8.self) }
                == #"{"item":{"id":"a","text":"milk"},"op":"insert","table":"todo"}"#)
        var retried = outgoing
        retried.baseVersion = "v2"
        #expect(retried.batchMember == nil)
        retried = outgoing
        retried.operation.kind = .update
        #expect(retried.batchMember == nil)
        retried = outgoing
        retried.sent = ["id": "a"]
        #expect(retried.batchMember == nil)
        #expect(outgoing.batchMember != nil)
    }
}
