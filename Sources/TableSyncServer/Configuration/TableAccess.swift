/// The two kinds of operation a table grants access to.
enum TableOperation: Sendable {
    /// GET of a page or a record.
    case read
    /// Insert, update, delete and undelete, alone or in a batch.
    case write
}

/// Who may do an operation (read or write) on a table: ``TableOptions/read`` and ``TableOptions/write``.
///
/// Written `anonymous`, `authenticated`, `role:NAME` or `disabled` in `--table` options and the configuration file.
public enum TableAccess: Sendable, Hashable, CustomStringConvertible {
    /// Anyone, with or without credentials (credentials that are sent must still be valid).
    case anonymous
    /// Any request with valid credentials.
    case authenticated
    /// A request with valid credentials whose role claim holds this value (``JWTSettings/roleClaim``).
    case role(String)
    /// No one: the operation is not offered (405).
    case disabled

    /// Parses the text form; `nil` for anything else.
    package init?(parsing text: String) {
        switch text {
        case "anonymous": self = .anonymous
        case "authenticated": self = .authenticated
        case "disabled": self = .disabled
        default:
            guard text.hasPrefix("role:"), text.count > "role:".count else { return nil }
            self = .role(String(text.dropFirst("role:".count)))
        }
    }

    /// The rule as the configuration spells it: `anonymous`, `authenticated`, `role:NAME` or `disabled`.
    public var description: String {
        switch self {
        case .anonymous: return "anonymous"
        case .authenticated: return "authenticated"
        case .role(let role): return "role:\(role)"
        case .disabled: return "disabled"
        }
    }

    /// Whether this access needs credentials.
    var needsCredentials: Bool {
        switch self {
        case .anonymous, .disabled: return false
        case .authenticated, .role: return true
        }
    }
}
