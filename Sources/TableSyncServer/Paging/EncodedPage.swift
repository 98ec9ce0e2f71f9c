import SyncProtocol

/// A page's records as the protocol sends them, encoded one at a time as the repository reads them: only one
/// record is ever held decoded, and the page ends before the record that would take its records past
/// ``maxBytes`` (``PageByteLimit``), so an answer's memory is bounded by the limit and one record, not by `$top`.
struct EncodedPage: PageCollector {
    /// `$select`: the properties sent besides the system properties, or `nil` for all.
    let select: [String]?
    /// The most bytes the page's records may take (``ServerConfiguration/maxPageBytes``).
    let maxBytes: Int
    /// The records' compact canonical JSON separated by commas: the inside of the page's array.
    private(set) var items: [UInt8] = []
    private var records = 0
    /// The record being encoded, kept between records so that its capacity is allocated once per page.
    private var scratch: [UInt8] = []

    init(select: [String]?, maxBytes: Int) {
        self.select = select
        self.maxBytes = maxBytes
    }

    mutating func take(_ record: StoredRecord) -> Bool {
        scratch.removeAll(keepingCapacity: true)
        CanonicalJSON.append(record.json(select: select), style: .compact, to: &scratch)
        guard PageByteLimit.admits(recordBytes: scratch.count, pageBytes: items.count, records: records, limit: maxBytes) else {
            return false
        }
        if records > 0 { items.append(UInt8(ascii: ",")) }
        items.append(contentsOf: scratch)
        records += 1
        return true
    }

    /// The answer's body: the page's records as a JSON array, alone (`member` `nil`) or as the value of `member`
    /// among `envelope`'s members, in the canonical form `CanonicalJSON` gives the whole object.
    func body(member: String? = nil, envelope: [String: JSONValue] = [:]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(items.count + 256)
        guard let member else {
            appendArray(to: &output)
            return output
        }
        output.append(UInt8(ascii: "{"))
        let keys = (Array(envelope.keys) + [member]).sorted(by: CanonicalJSON.keyPrecedes)
        for (index, key) in keys.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            CanonicalJSON.append(.string(key), style: .compact, to: &output)
            output.append(UInt8(ascii: ":"))
            if key == member {
                appendArray(to: &output)
            } else if let value = envelope[key] {
                CanonicalJSON.append(value, style: .compact, to: &output)
            }
        }
        output.append(UInt8(ascii: "}"))
        return output
    }

    private func appendArray(to output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        output.append(contentsOf: items)
        output.append(UInt8(ascii: "]"))
    }
}
