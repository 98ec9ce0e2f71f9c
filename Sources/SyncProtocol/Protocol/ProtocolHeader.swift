/// HTTP header names of the table protocol and of TableSync's extensions, in one place for client and server.
///
/// Header names are compared without regard to case, as HTTP does.
public enum ProtocolHeader {
    /// The protocol version a request speaks (`2.0.0`, `3.0.0`); also accepted as a query parameter.
    public static let apiVersion = "ZUMO-API-VERSION"
    /// The Azure Mobile Apps authentication header; its value is the token itself.
    public static let zumoAuth = "X-ZUMO-AUTH"
    /// `Authorization: Bearer <token>`.
    public static let authorization = "Authorization"
    /// The prefix of a bearer credential in ``authorization``.
    public static let bearerPrefix = "Bearer "
    /// The record's `version` in double quotes.
    public static let eTag = "ETag"
    /// The `version` an update or delete expects, in double quotes (or `*`).
    public static let ifMatch = "If-Match"
    /// The `ETag` of the change feed answer a client last saw (``ChangeFeed``): the server waits while it holds.
    public static let ifNoneMatch = "If-None-Match"
    /// The URL of a new record, sent with 201.
    public static let location = "Location"
    /// The extensions a server offers (see ``ProtocolExtension``), comma-separated, on every response; on a request,
    /// those the client asks for (``ProtocolExtension/wholePages``).
    public static let extensions = "X-TableSync-Extensions"
    /// The largest `$top` the table accepts, on every answer to a list request (a refusal of a too large `$top`
    /// included), so a client learns the page size it may ask for.
    public static let maxTop = "X-TableSync-Max-Top"
}
