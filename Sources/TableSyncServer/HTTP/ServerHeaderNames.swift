import HTTPTypes

/// Header names the server uses beyond those `HTTPTypes` names and the protocol's own (`ProtocolHeader`).
extension HTTPField.Name {
    /// `Link` (RFC 8288): a v2 page that ended before `$top` names the next page with `rel=next`.
    static let link = HTTPField.Name("Link")!
    /// `X-Request-ID`: the request's id, as the client sent it or as the server gave it (``RequestIdentifier``).
    static let requestID = HTTPField.Name("X-Request-ID")!
    /// `X-Forwarded-Proto`: the scheme a reverse proxy in front received the request by (``RecordLocation``).
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!
}
