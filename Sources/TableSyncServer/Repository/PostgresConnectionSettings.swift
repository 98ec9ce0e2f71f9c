import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// How a ``PostgresLocation`` becomes PostgresNIO's configuration: one place for the TLS rules (``tlsUse()``), used
/// by the connection pool and by the check that runs before the server starts.
extension PostgresLocation {
    /// What a connection does about TLS, before it becomes one of PostgresNIO's two TLS types (the pool's takes
    /// a `TLSConfiguration`, a single connection's an `NIOSSLContext`).
    enum TLSUse {
        case disable
        /// TLS if the server offers it.
        case prefer(TLSConfiguration)
        /// TLS or no connection.
        case require(TLSConfiguration)
    }

    /// The TLS of ``effectiveTLSMode``: none for `disable`; an unchecked certificate for `prefer` and `require`;
    /// the chain checked against ``rootCertificatePath`` (or the system's trust store) for `verify-ca`, and the
    /// host name or address too for `verify-full`.
    func tlsUse() throws(ConfigurationError) -> TLSUse {
        let mode = effectiveTLSMode
        var tls = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case .disable: return .disable
        case .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if mode.verifiesCertificate, let path = rootCertificatePath {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw ConfigurationError(
                    "sslrootcert \(path): no such readable file (a PEM file of the certificate authorities to trust)")
            }
            tls.trustRoots = .file(path)
        }
        return mode == .prefer ? .prefer(tls) : .require(tls)
    }

    /// The connection pool's configuration, with at most `poolSize` connections whose statements run at most
    /// `statementTimeout`.
    func clientConfiguration(
        poolSize: Int, statementTimeout: Duration = ServerConfiguration.defaultStatementTimeout
    ) throws(ConfigurationError) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch try tlsUse() {
        case .disable: tls = .disable
        case .prefer(let settings): tls = .prefer(settings)
        case .require(let settings): tls = .require(settings)
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password,
            database: database, tls: tls)
        configuration.options.maximumConnections = poolSize
        configuration.options.additionalStartupParameters =
            Self.startupParameters + Self.limitParameters(statementTimeout: statementTimeout)
        return configuration
    }

    /// Set on every pooled connection: `statement_timeout` cancels a statement past the limit (SQLSTATE 57014), and
    /// `client_connection_check_interval` makes PostgreSQL end a statement whose connection the server closed, as it
    /// does to cancel a request whose client went away.
    static func limitParameters(statementTimeout: Duration) -> [(String, String)] {
        let milliseconds = Int64((statementTimeout / .milliseconds(1)).rounded(.down))
        return [("statement_timeout", String(max(1, milliseconds))), ("client_connection_check_interval", "1000")]
    }

    /// Sent when a connection opens: `application_name` names the server in `pg_stat_activity` and the
    /// database's logs, so that its connections can be counted and told apart from other programs'.
    static let startupParameters = [("application_name", "tablesync-server")]

    /// Opens one connection as the pool would and asks `pg_stat_ssl` whether it is encrypted, so that a server
    /// that cannot reach its database refuses to start, saying why in one sentence (the pool itself retries for 15 s
    /// and then reports only that it gave up). A database that cannot be reached yet (refused, starting up) is tried
    /// again with backoff for up to `wait`, logged once; one that refuses the credentials or TLS stops the start at
    /// once. Returns whether the connection is encrypted.
    @discardableResult
    func checkConnection(logger: Logger, waitingUpTo wait: Duration = .zero) async throws(ConfigurationError) -> Bool {
        let configuration = try singleConnectionConfiguration()
        let started = ContinuousClock.now
        var pause = Duration.milliseconds(250)
        var waiting = false
        while true {
            do {
                return try await Self.withSingleConnection(configuration, logger: logger) { connection in
                    let rows = try await connection.query(
                        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger
                    ).collect()
                    return try rows.first?.decode(Bool.self) ?? false
                }
            } catch {
                let worthWaiting = [.unreachable, .unavailable].contains(DatabaseFailure(error))
                guard worthWaiting, ContinuousClock.now - started + pause <= wait else {
                    throw ConfigurationError(
                        "cannot connect to PostgreSQL at \(DatabaseLocation.postgres(self)): \(refusal(of: error))")
                }
                if !waiting {
                    waiting = true
                    logger.notice(
                        "waiting for PostgreSQL",
                        metadata: [
                            "database": "\(DatabaseLocation.postgres(self))", "reason": "\(refusal(of: error))",
                            "seconds": "\(wait / .seconds(1))"
                        ])
                }
                do {
                    try await Task.sleep(for: pause)
                } catch {
                    throw ConfigurationError(
                        "stopped while waiting for PostgreSQL at \(DatabaseLocation.postgres(self))")
                }
                pause = min(pause * 2, .seconds(2))
            }
        }
    }

    /// What the start says of `error`: ``reason(of:)``, and for a refused connection the address nothing listens on.
    func refusal(of error: any Error) -> String {
        guard Self.isConnectionRefused(error) else { return Self.reason(of: error) }
        return "nothing accepts connections at \(host):\(port); start PostgreSQL there, or correct the host and port"
    }

    /// Whether `error` is a TCP connection the database's host refused (`ECONNREFUSED`).
    static func isConnectionRefused(_ error: any Error) -> Bool {
        guard let underlying = (error as? PSQLError)?.underlying else { return false }
        if let error = underlying as? NIOConnectionError {
            return error.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
        }
        return (underlying as? IOError)?.errnoCode == ECONNREFUSED
    }

    /// The configuration of a connection of its own, outside the pool, with the pool's TLS settings.
    func singleConnectionConfiguration() throws(ConfigurationError) -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch try tlsUse() {
            case .disable: tls = .disable
            case .prefer(let settings): tls = .prefer(try NIOSSLContext(configuration: settings))
            case .require(let settings): tls = .require(try NIOSSLContext(configuration: settings))
            }
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(
                "cannot use the TLS settings for PostgreSQL at \(DatabaseLocation.postgres(self)): \(error)")
        }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password,
            database: database, tls: tls)
        configuration.options.additionalStartupParameters = Self.startupParameters
        return configuration
    }

    /// Runs `body` on a new connection of `configuration`, closed afterwards.
    static func withSingleConnection<Value: Sendable>(
        _ configuration: PostgresConnection.Configuration, logger: Logger,
        _ body: (PostgresConnection) async throws -> Value
    ) async throws -> Value {
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        let result: Result<Value, any Error>
        do {
            result = .success(try await body(connection))
        } catch {
            result = .failure(error)
        }
        try? await connection.close()
        return try result.get()
    }

    /// What went wrong, in words that help, without the password: PostgresNIO hides its errors' details from
    /// `description` on purpose, so they are taken apart here.
    static func reason(of error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if error.code == .authMechanismRequiresPassword {
            return "the database wants a password: set PGPASSWORD or put it in the URL"
        }
        if error.code == .sslUnsupported {
            return
                """
                the server does not offer TLS, which this sslmode requires (ssl = on in postgresql.conf, or a weaker \
                sslmode)
                """
        }
        if let message = error.serverInfo?[.message] { return message }
        if let underlying = error.underlying {
            let text = String(describing: underlying)
            if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed")
                || text.contains("failedToValidateHostname")
            {
                return
                    """
                    the server's TLS certificate is not trusted (\(text)); give the authority that signed it with \
                    sslrootcert=PATH, or check the host name
                    """
            }
            return text
        }
        return "\(error.code)"
    }
}
