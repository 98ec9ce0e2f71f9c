/// A token the server accepts as it is (``TokenList``), with the name its log shows instead of it.
///
/// A named token stands for a user: its name is the subject that owns its rows in per-user tables
/// (``TableOptions/perUser``). A token without a name authenticates, but owns no rows.
public struct StaticToken: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The token as clients send it.
    public var secret: String
    /// The name given in the tokens file, or `nil`.
    public var givenName: String?
    /// Where the token came from when it has no name (`line 3`, `entry 2`), for the log.
    public var origin: String

    /// A token named `name` (or unnamed, known by `origin`).
    public init(secret: String, name: String? = nil, origin: String = "unnamed") {
        self.secret = secret
        givenName = name
        self.origin = origin
    }

    /// An unnamed token, as tests write them.
    public init(stringLiteral secret: String) {
        self.init(secret: secret)
    }

    /// What the log shows for a request that presents this token.
    public var name: String { givenName ?? "token (\(origin))" }

    /// The identity of a request that presents this token.
    var identity: RequestIdentity { RequestIdentity(name: name, subject: givenName, roles: []) }

    /// `true` when `name` can name a token: 1–64 ASCII letters, digits, `.`, `_`, `-` or `@`.
    package static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: "@")
            }
    }
}
