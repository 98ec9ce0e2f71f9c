/// The JSON body of every error response: `{"error": "what was wrong"}`.
///
/// Conflict responses (409, 412) carry the server's copy of the record instead.
public enum ProtocolErrorBody {
    /// The member holding the message.
    public static let errorMember = "error"

    /// The body for `message`.
    public static func make(_ message: String) -> JSONValue { .object([errorMember: .string(message)]) }

    /// The message of an error body, when `body` is one.
    public static func message(in body: JSONValue) -> String? { body[errorMember]?.stringValue }
}
