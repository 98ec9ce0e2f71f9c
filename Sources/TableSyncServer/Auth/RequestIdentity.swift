/// Who a request comes from, once its credentials were checked (``AuthenticationMiddleware``): what the access
/// rules of a table (``TableAccess``) and its per-user rows (``TableOptions/perUser``) go by.
public struct RequestIdentity: Sendable, Hashable {
    /// What the log shows: a static token's name, or a JWT's subject.
    public var name: String
    /// The user whose rows a per-user table shows and stamps; `nil` when the credentials name no user.
    public var subject: String?
    /// The values of the role claim (``JWTSettings/roleClaim``); empty for a static token.
    public var roles: Set<String>

    public init(name: String, subject: String?, roles: Set<String>) {
        self.name = name
        self.subject = subject
        self.roles = roles
    }
}
