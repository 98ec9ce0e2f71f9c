/// A position in some sequence with the 64-bit key it sorts by.
struct KeyedPosition: Equatable {
    var key: UInt64
    var position: UInt32
}

/// Sorts `items` by key, stably (items of equal keys keep their order), in one pass of a byte each, least
/// significant byte first: linear in the count, where a comparison sort of a table's hundred thousand names took a
/// tenth of a `status`. A pass over a byte every key shares moves nothing and is skipped.
func radixSortByKey(_ items: inout [KeyedPosition]) {
    let count = items.count
    guard count > 1 else { return }
    // Every byte's counts in one read of the keys.
    var counts = [Int](repeating: 0, count: 8 * 256)
    counts.withUnsafeMutableBufferPointer { counts in
        items.withUnsafeBufferPointer { items in
            for item in items {
                var key = item.key
                for byte in 0..<8 {
                    counts[byte &* 256 &+ Int(key & 0xff)] &+= 1
                    key >>= 8
                }
            }
        }
    }
    var scratch = [KeyedPosition](repeating: KeyedPosition(key: 0, position: 0), count: count)
    var sortedIsInScratch = false
    for byte in 0..<8 {
        let byteCounts = counts[(byte * 256)..<(byte * 256 + 256)]
        if byteCounts.contains(count) { continue }
        var starts = [Int](repeating: 0, count: 256)
        var total = 0
        for (digit, digitCount) in byteCounts.enumerated() {
            starts[digit] = total
            total += digitCount
        }
        let shift = UInt64(byte * 8)
        func scatter(_ source: UnsafeBufferPointer<KeyedPosition>, _ target: UnsafeMutableBufferPointer<KeyedPosition>)
        {
            starts.withUnsafeMutableBufferPointer { starts in
                for item in source {
                    let digit = Int((item.key >> shift) & 0xff)
                    target[starts[digit]] = item
                    starts[digit] &+= 1
                }
            }
        }
        if sortedIsInScratch {
            scratch.withUnsafeBufferPointer { source in items.withUnsafeMutableBufferPointer { scatter(source, $0) } }
        } else {
            items.withUnsafeBufferPointer { source in scratch.withUnsafeMutableBufferPointer { scatter(source, $0) } }
        }
        sortedIsInScratch.toggle()
    }
    if sortedIsInScratch { items = scratch }
}
