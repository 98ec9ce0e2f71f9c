/// Who a request comes from, once its credentials were checked (``AuthenticationMiddleware``): what the access
/// rules of a table (``TableAccess``) and its per-user rows (``TableOptions/perUser``) go by.
package struct RequestIdentity: Sendable, Hashable {
    /// What the log shows: a static token's name, or a JWT's subject.
    package var name: String
    /// The user whose rows a per-user table shows and stamps; `nil` when the credentials name no user.
    package var subject: String?
    /// The values of the role claim (``JWTSettings/roleClaim``); empty for a static token.
    package var roles: Set<String>

    package init(name: String, subject: String?, roles: Set<String>) {
        self.name = name
        self.subject = subject
        self.roles = roles
    }
}
