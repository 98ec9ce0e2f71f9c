/// Where a page bounded by bytes ends: before the record that would take the page's records past the limit, but
/// never before its first record, so that every record can be read however large it is.
enum PageByteLimit {
    /// Whether a record encoded in `recordBytes` joins a page that already holds `records` records encoded in
    /// `pageBytes` (their separating commas included). The record adds a comma unless it is the first.
    static func admits(recordBytes: Int, pageBytes: Int, records: Int, limit: Int) -> Bool {
        guard records > 0 else { return true }
        return pageBytes + 1 + recordBytes <= limit
    }
}
