import NIOCore
import SyncProtocol

/// A page's records as the protocol sends them, encoded one at a time as the repository reads them: only one
/// record is ever held decoded, and the page ends before the record that would take its records past
/// ``maxBytes`` (``PageByteLimit``), so an answer's memory is bounded by the limit and one record, not by `$top`.
struct EncodedPage: PageCollector {
    /// `$select`: the properties each item carries (``ListQuery/select``), or `nil` for all.
    let select: [String]?
    /// The most bytes the page's records may take (``ServerConfiguration/maxPageBytes``).
    let maxBytes: Int
    /// The records' compact canonical JSON separated by commas: the inside of the page's array, in the buffer the
    /// answer sends (no copy of the page is made to answer it).
    private(set) var items = ByteBuffer()
    private var records = 0

    init(select: [String]?, maxBytes: Int) {
        self.select = select
        self.maxBytes = maxBytes
    }

    mutating func take(_ record: StoredRecord) -> Bool {
        let encoded = CanonicalJSON.encode(record.json(select: select), style: .compact)
        guard
            PageByteLimit.admits(
                recordBytes: encoded.count, pageBytes: items.readableBytes, records: records, limit: maxBytes)
        else {
            return false
        }
        if records > 0 { items.writeInteger(UInt8(ascii: ",")) }
        items.writeBytes(encoded)
        records += 1
        return true
    }

    /// The answer's body, in parts sent one after another: the page's records as a JSON array, alone (`member`
    /// `nil`) or as the value of `member` among `envelope`'s members, in the canonical form `CanonicalJSON` gives
    /// the whole object.
    func body(member: String? = nil, envelope: [String: JSONValue] = [:]) -> [ByteBuffer] {
        var before: [UInt8] = [UInt8(ascii: "[")]
        var after: [UInt8] = [UInt8(ascii: "]")]
        if let member {
            let keys = envelope.keys.sorted(by: CanonicalJSON.keyPrecedes)
            before = [UInt8(ascii: "{")]
            for key in keys where CanonicalJSON.keyPrecedes(key, member) {
                Self.appendMember(key, envelope[key] ?? .null, to: &before)
                before.append(UInt8(ascii: ","))
            }
            CanonicalJSON.append(.string(member), style: .compact, to: &before)
            before.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: "[")])
            for key in keys where CanonicalJSON.keyPrecedes(member, key) {
                after.append(UInt8(ascii: ","))
                Self.appendMember(key, envelope[key] ?? .null, to: &after)
            }
            after.append(UInt8(ascii: "}"))
        }
        return [ByteBuffer(bytes: before), items, ByteBuffer(bytes: after)]
    }

    private static func appendMember(_ key: String, _ value: JSONValue, to output: inout [UInt8]) {
        CanonicalJSON.append(.string(key), style: .compact, to: &output)
        output.append(UInt8(ascii: ":"))
        CanonicalJSON.append(value, style: .compact, to: &output)
    }
}
