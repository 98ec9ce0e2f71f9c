import Logging

/// What the server does before it listens: it reaches PostgreSQL (waiting up to the configured time), prepares the
/// schema of every table, checks a JWKS file, loads the key sets, and arms the database's availability.
enum ServerStart {
    static func prepare(
        configuration: ServerConfiguration, database: ServerDatabase, repository: ChangeSignallingRepository,
        authenticator: Authenticator, logger: Logger
    ) async throws {
        if let location = database.postgres?.location {
            let encrypted = try await location.checkConnection(logger: logger, waitingUpTo: configuration.databaseWait)
            logger.info(
                "connected to PostgreSQL",
                metadata: ["sslmode": "\(location.effectiveTLSMode.rawValue)", "encrypted": "\(encrypted)"])
        }
        let tables = configuration.tables
        try await repository.prepare(tables: tables)
        if case .file(let path)? = configuration.jwt?.keySet { try await checkKeySetFile(path) }
        await authenticator.prepare()
        database.availability.arm()
        logger.info(
            "serving tables",
            metadata: [
                "tables": "\(tables.map(\.name).joined(separator: ","))", "database": "\(configuration.database)",
                "auth": "\(configuration.authenticationSummary)"
            ])
    }

    /// Refuses to start on a JWKS file that cannot be read or holds no key to check tokens with: a file is the
    /// operator's to fix, where a key set URL that is down leaves a warning and is tried again.
    private static func checkKeySetFile(_ path: String) async throws {
        let keySet: KeySet
        do {
            keySet = try await KeySet.load(from: .file(path))
        } catch {
            throw ConfigurationError(
                "the JWKS file \(path) cannot be used (\(error)); give --jwt-jwks a readable JWKS file")
        }
        guard !keySet.algorithms.isEmpty else {
            throw ConfigurationError(
                """
                the JWKS file \(path) holds no key this server can check tokens with; it needs signing keys \
                with a kid, RSA for RS256 or EC P-256 for ES256
                """)
        }
    }
}
