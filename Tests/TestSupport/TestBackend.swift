import Foundation
import TableSyncServer

/// The databases server-backed tests run on. PostgreSQL needs `TABLESYNC_TEST_POSTGRES_URL`
/// (`eval "$(scripts/postgres-for-tests.sh)"`, which `make test` does); without it the PostgreSQL cases are
/// skipped locally, and in CI (`CI` set) they run and fail, so they can never be skipped silently there.
public enum TestBackend: String, CaseIterable, Sendable {
    case sqlite
    case postgres

    public static let postgresURL = ProcessInfo.processInfo.environment["TABLESYNC_TEST_POSTGRES_URL"]
    public static let isCI =
        ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty && $0 != "false" && $0 != "0" } ?? false

    /// Every backend that runs here: PostgreSQL when configured, and always in CI (where a missing URL fails).
    public static let available: [TestBackend] = {
        if postgresURL != nil || isCI { return [.sqlite, .postgres] }
        print(
            """
            TABLESYNC_TEST_POSTGRES_URL is not set; skipping the PostgreSQL cases (run: eval \
            \"$(scripts/postgres-for-tests.sh)\")
            """
        )
        return [.sqlite]
    }()

    /// The PostgreSQL backend alone, or nothing when skipped locally.
    public static let postgresIfAvailable: [TestBackend] = available.filter { $0 == .postgres }

    /// A fresh SQLite file, or the test PostgreSQL database (tests use unique table names there).
    public func database() throws -> DatabaseLocation {
        switch self {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "tablesync-test-\(UUID().uuidString).sqlite"
            ).path
            return .sqlite(path: path)
        case .postgres:
            guard let url = Self.postgresURL else {
                throw ConfigurationError(
                    """
                    TABLESYNC_TEST_POSTGRES_URL is not set; run eval \"$(scripts/postgres-for-tests.sh)\" before the \
                    tests
                    """
                )
            }
            return try DatabaseLocation.parse(url)
        }
    }

    /// Removes what ``database()`` made for SQLite.
    public static func removeFiles(of database: DatabaseLocation) {
        if case .sqlite(let path) = database {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }
}

/// A fresh table name, so tests sharing one PostgreSQL database never see each other's records.
public func uniqueTableName(_ prefix: String = "todo") -> String {
    "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
}
