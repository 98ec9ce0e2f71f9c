/// Whether and how the server's connections to PostgreSQL use TLS: `sslmode=` in the `postgres://` URL (or
/// `PGSSLMODE`), with libpq's names and meanings, so that a URL that works with `psql` works here.
///
/// The certificate authorities that `verify-ca` and `verify-full` trust are the system's trust store, or the
/// PEM file given by `sslrootcert=PATH` (or `PGSSLROOTCERT`).
public enum PostgresTLSMode: String, Sendable, Hashable, CaseIterable {
    /// Plain TCP, never TLS (a loopback or otherwise trusted network).
    case disable
    /// TLS when the server offers it, plain TCP otherwise; the certificate is not checked. libpq's default, and ours.
    case prefer
    /// TLS or no connection; the certificate is not checked (it protects against reading, not against a
    /// server that impersonates the database).
    case require
    /// TLS with a certificate signed by a trusted authority, whatever host name it names.
    case verifyCA = "verify-ca"
    /// TLS with a certificate signed by a trusted authority for the host name or address in the URL: the mode
    /// for a database reached over a network someone else controls.
    case verifyFull = "verify-full"

    /// The mode of a URL that names none.
    package static let `default`: PostgresTLSMode = .prefer

    /// Parses an `sslmode` value; `allow` (libpq's "plain first, TLS if the server insists") is refused, since
    /// it only matters for servers that demand TLS, where `prefer` does as well.
    static func parse(_ text: String, source: String) throws(ConfigurationError) -> PostgresTLSMode {
        guard let mode = PostgresTLSMode(rawValue: text) else {
            throw ConfigurationError(
                "\(source): sslmode must be one of \(allCases.map(\.rawValue).joined(separator: ", ")), not '\(text)'")
        }
        return mode
    }

    /// Whether the server's certificate is checked against the trusted authorities.
    package var verifiesCertificate: Bool { self == .verifyCA || self == .verifyFull }
}
