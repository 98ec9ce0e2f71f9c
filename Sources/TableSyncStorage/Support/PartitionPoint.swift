/// The first of `0..<count` for which `isBefore` is `false`, by binary search: `isBefore` must hold for a prefix
/// of the range and for nothing after it (as "sorts before the target" does on a sorted sequence). `count` when
/// it holds throughout.
package func partitionPoint(_ count: Int, _ isBefore: (Int) throws -> Bool) rethrows -> Int {
    var low = 0
    var high = count
    while low < high {
        let middle = (low + high) / 2
        if try isBefore(middle) { low = middle + 1 } else { high = middle }
    }
    return low
}
