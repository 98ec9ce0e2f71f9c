/// Why credentials were refused, for the server's log only: the client's answer is always the same 401
/// (``ProtocolError/unauthorized``), so that it learns nothing of what to change in a forged token. The reason
/// never holds the token.
struct TokenRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    let reason: String

    init(_ reason: String) { self.reason = reason }

    var description: String { reason }
}
