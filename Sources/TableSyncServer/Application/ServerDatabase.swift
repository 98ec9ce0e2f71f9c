import GRDB
import Logging

/// The server's database as the configuration names it: the repository over it, the metrics (whose pool gauges
/// exist for PostgreSQL alone), the availability that answers 503 while it cannot be reached and, for PostgreSQL,
/// its location and connection pools, which run as services of the application.
struct ServerDatabase: Sendable {
    let storage: any RecordRepository
    let metrics: ServerMetrics
    let availability: DatabaseAvailability
    let postgres: (location: PostgresLocation, pools: PostgresPools)?

    /// Opens the database of `configuration`: an SQLite file at once (a file the server cannot open is a
    /// ``ConfigurationError``), a PostgreSQL pool that connects when the application runs.
    static func open(configuration: ServerConfiguration, logger: Logger) throws -> ServerDatabase {
        switch configuration.database {
        case .sqlite(let path):
            try DatabaseLocation.checkFolder(ofSQLitePath: path)
            let metrics = ServerMetrics()
            let availability = DatabaseAvailability(
                database: "\(configuration.database)", publicName: "the server's SQLite database", logger: logger,
                gauge: metrics.databaseUp)
            do {
                let storage = try SQLiteRecordRepository(
                    path: path, statementTimeout: configuration.statementTimeout,
                    bulkReadPriority: configuration.bulkReadPriority, metrics: metrics)
                return ServerDatabase(storage: storage, metrics: metrics, availability: availability, postgres: nil)
            } catch let error as DatabaseError where error.resultCode.primaryResultCode == .SQLITE_CANTOPEN {
                throw ConfigurationError(
                    """
                    cannot open the SQLite database \(path) (\(error.message ?? "unable to open")); it must be a \
                    file the server's user may read and write, in a folder it may write
                    """)
            }
        case .postgres(let location):
            // The pool reports every failed connection attempt at info; the availability's lines say it once.
            var poolLogger = logger
            if poolLogger.logLevel == .info { poolLogger.logLevel = .notice }
            let pools = PostgresPools(
                configuration: try location.clientConfiguration(
                    poolSize: configuration.postgresPoolSize,
                    statementTimeout: configuration.statementTimeout),
                logger: poolLogger)
            let metrics = ServerMetrics(databasePoolSize: configuration.postgresPoolSize)
            let availability = DatabaseAvailability(
                database: "\(configuration.database)",
                publicName: "the server's PostgreSQL database \"\(location.database)\"", logger: logger,
                gauge: metrics.databaseUp)
            let storage = try PostgresRecordRepository(
                pools: pools, logger: logger, statementTimeout: configuration.statementTimeout, location: location,
                poolSize: configuration.postgresPoolSize, metrics: metrics)
            return ServerDatabase(
                storage: storage, metrics: metrics, availability: availability, postgres: (location, pools))
        }
    }
}
