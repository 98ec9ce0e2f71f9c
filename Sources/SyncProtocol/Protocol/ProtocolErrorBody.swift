/// The JSON body of every error response: `{"error": "what was wrong"}`, with `"code"` when the refusal has a kind
/// a client acts on (``ProtocolErrorCode``).
///
/// Conflict responses (409, 412) carry the server's copy of the record instead.
public enum ProtocolErrorBody {
    /// The member holding the message.
    public static let errorMember = "error"
    /// The member holding the ``ProtocolErrorCode``, when there is one.
    public static let codeMember = "code"

    /// The body for `message`, with `code` when given.
    public static func make(_ message: String, code: ProtocolErrorCode? = nil) -> JSONValue {
        var members: [String: JSONValue] = [errorMember: .string(message)]
        if let code { members[codeMember] = .string(code.rawValue) }
        return .object(members)
    }

    /// The message of an error body, when `body` is one.
    public static func message(in body: JSONValue) -> String? { body[errorMember]?.stringValue }

    /// The code of an error body, when `body` is one with a code this version knows.
    public static func code(in body: JSONValue) -> ProtocolErrorCode? {
        body[codeMember]?.stringValue.flatMap(ProtocolErrorCode.init(rawValue:))
    }
}
