/// How many rows each `FETCH` of a page's PostgreSQL cursor asks for.
///
/// PostgreSQL sends a fetch's rows whole, and a page that ends early (``PageByteLimit``) must still receive and
/// drop the rest of its fetch. So the first fetch asks for one row, and each later one for about
/// ``bytesPerFetch`` by the largest row seen so far, growing at most ``growth`` times per fetch, so that rows much
/// larger than those before them cost at most one fetch's worth.
enum CursorFetchSize {
    /// The bytes a fetch aims at, by the largest row seen.
    static let bytesPerFetch = 4 * 1024 * 1024
    /// How many times larger than the one before a fetch may be.
    static let growth = 16

    /// The rows the next fetch asks for: `rowsWanted` at most (the page's remaining rows), after fetches of which
    /// the last asked for `previous` rows (0 before the first), the largest row's body taking `largestRowBytes`.
    static func next(rowsWanted: Int, previous: Int, largestRowBytes: Int) -> Int {
        guard previous > 0 else { return min(1, rowsWanted) }
        let byBytes = max(1, bytesPerFetch / max(1, largestRowBytes))
        return min(rowsWanted, previous * growth, byBytes)
    }
}
