/// How deep a record may nest: deep enough for any real record, shallow enough that every envelope the protocol
/// puts around a record (a page's `{"items": [...]}`, a batch's `{"operations": [{"item": ...}]}` and its answer's
/// `{"results": [{"body": ...}]}`, a journal line, a conflict file) still parses within ``JSONParser/maximumDepth``.
/// One limit for `insert`, hand edits, the single routes and the batch: a record one route takes, the others carry.
///
/// ```swift
/// RecordNesting.depth(of: ["id": "a", "tags": ["x"]])   // 2
/// ```
public enum RecordNesting {
    /// The levels an envelope may add around a record.
    public static let envelopeLevels = 4
    /// The deepest a record may nest: the record object is level 1.
    public static let maximumDepth = JSONParser.maximumDepth - envelopeLevels

    /// How many levels of objects and arrays `value` nests (a scalar: 0).
    public static func depth(of value: JSONValue) -> Int {
        switch value {
        case .object(let members): return 1 + (members.values.map(depth(of:)).max() ?? 0)
        case .array(let elements): return 1 + (elements.map(depth(of:)).max() ?? 0)
        default: return 0
        }
    }

    /// Why `record` cannot be carried by the protocol's envelopes, or `nil` when it can.
    public static func problem(with record: [String: JSONValue]) -> String? {
        let depth = depth(of: .object(record))
        guard depth > maximumDepth else { return nil }
        return
            """
            the record nests \(depth) levels deep, more than the \(maximumDepth) a record may (the protocol's pages \
            and batches wrap it in \(envelopeLevels) more, within JSON's limit of \(JSONParser.maximumDepth))
            """
    }
}
