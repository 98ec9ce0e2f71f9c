import Foundation
import PostgresNIO
import Testing
import TestSupport
@testable import TableSyncServer

/// `sslmode` and `sslrootcert` in the `postgres://` URL, as libpq reads them: parsed alone, then against the test
/// PostgreSQL, which `scripts/postgres-for-tests.sh` runs with `ssl = on` and a certificate for 127.0.0.1 signed
/// by a test authority (`TABLESYNC_TEST_POSTGRES_CA`), standing for a managed database reached over a network.
@Suite("PostgreSQL TLS")
struct PostgresTLSTests {
    @Test("sslmode and sslrootcert in the URL and from PGSSLMODE / PGSSLROOTCERT; anything else is refused by name")
    func parsing() throws {
        let url = "postgres://me:secret@db.example:5433/sync"
        #expect(
            try DatabaseLocation.parse(url + "?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem")
                == .postgres(
                    PostgresLocation(
                        host: "db.example", port: 5433, username: "me", password: "secret", database: "sync",
                        tlsMode: .verifyFull, rootCertificatePath: "/etc/ca.pem")))
        for mode in PostgresTLSMode.allCases {
            guard case .postgres(let location) = try DatabaseLocation.parse(url + "?sslmode=" + mode.rawValue) else {
                Issue.record("not a PostgreSQL location")
                continue
            }
            #expect(location.effectiveTLSMode == mode)
        }
        guard case .postgres(let plain) = try DatabaseLocation.parse(url) else {
            throw ConfigurationError("not PostgreSQL")
        }
        #expect(plain.tlsMode == nil && plain.effectiveTLSMode == .prefer, "no sslmode: libpq's default, prefer")

        #expect(
            throws: ConfigurationError(
                """
                --database postgres://me:***@db.example:5433/sync?sslmode=verify: sslmode must be one of disable, \
                prefer, require, verify-ca, verify-full, not 'verify'
                """
            )
        ) {
            try DatabaseLocation.parse(url + "?sslmode=verify")
        }
        #expect(
            throws: ConfigurationError(
                """
                --database postgres://me:***@db.example:5433/sync?ssl_mode=require: unknown parameter 'ssl_mode' \
                (known: sslmode, sslrootcert)
                """
            )
        ) {
            try DatabaseLocation.parse(url + "?ssl_mode=require")
        }
        #expect(throws: ConfigurationError.self) { try DatabaseLocation.parse(url + "?sslmode=") }

        let environment = ["PGPASSWORD": "fromenv", "PGSSLMODE": "require", "PGSSLROOTCERT": "/ca.pem"]
        let withoutPassword = PostgresLocation(host: "h", username: "u", database: "d")
        #expect(
            try withoutPassword.filledIn(from: environment)
                == PostgresLocation(
                    host: "h", username: "u", password: "fromenv", database: "d", tlsMode: .require,
                    rootCertificatePath: "/ca.pem"))
        let explicit = PostgresLocation(host: "h", username: "u", password: "p", database: "d", tlsMode: .disable)
        #expect(try explicit.filledIn(from: environment).tlsMode == .disable, "the URL wins over PGSSLMODE")
        #expect(throws: ConfigurationError.self) { try withoutPassword.filledIn(from: ["PGSSLMODE": "strict"]) }
        #expect(!"\(DatabaseLocation.postgres(explicit))".contains("p@"), "descriptions carry no password")
        #expect("\(DatabaseLocation.postgres(explicit))" == "postgres://u@h:5432/d?sslmode=disable")
    }

    /// The test PostgreSQL with `query` added to its URL.
    static func testLocation(_ query: String) throws -> PostgresLocation {
        let url = try #require(TestBackend.postgresURL, "TABLESYNC_TEST_POSTGRES_URL")
        guard case .postgres(let location) = try DatabaseLocation.parse(url + query) else {
            throw ConfigurationError("TABLESYNC_TEST_POSTGRES_URL is not a postgres:// URL")
        }
        return location
    }

    /// The test authority's certificate, percent-encoded for a URL.
    static func testAuthority() throws -> String {
        let path = try #require(
            ProcessInfo.processInfo.environment["TABLESYNC_TEST_POSTGRES_CA"], "TABLESYNC_TEST_POSTGRES_CA")
        return path.replacingOccurrences(of: "/", with: "%2F")
    }

    @Test(
        "each sslmode against a real PostgreSQL with TLS: what the connection pool gets, as pg_stat_ssl sees it",
        arguments: TestBackend.postgresIfAvailable)
    func poolConnections(_ backend: TestBackend) async throws {
        let authority = try Self.testAuthority()
        let cases: [(query: String, encrypted: Bool)] = [
            ("?sslmode=disable", false),
            ("", true),
            ("?sslmode=prefer", true),
            ("?sslmode=require", true),
            ("?sslmode=verify-ca&sslrootcert=\(authority)", true),
            ("?sslmode=verify-full&sslrootcert=\(authority)", true)
        ]
        for (query, encrypted) in cases {
            let location = try Self.testLocation(query)
            #expect(try await location.checkConnection(logger: testLogger) == encrypted, "check before start, \(query)")
            try await withPostgresClient(location) { client in
                let rows = try await client.query(
                    """
                    SELECT ssl, application_name FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE pid = \
                    pg_backend_pid()
                    """,
                    logger: testLogger
                ).collect()
                let (ssl, application) = try #require(rows.first).decode((Bool, String).self)
                #expect(ssl == encrypted, "the pool's connection, \(query)")
                #expect(application == "tablesync-server", "the pool's connections name themselves in pg_stat_activity")
            }
        }
    }

    @Test(
        "verify-full refuses a certificate no trusted authority signed, and a missing sslrootcert file, saying so",
        arguments: TestBackend.postgresIfAvailable)
    func verificationFailures(_ backend: TestBackend) async throws {
        // The system's trust store does not hold the test authority: as a database with a self-signed certificate.
        await #expect {
            try await Self.testLocation("?sslmode=verify-full").checkConnection(logger: testLogger)
        } throws: { error in
            "\(error)".contains("certificate is not trusted") && "\(error)".contains("sslrootcert")
        }
        await #expect {
            try await Self.testLocation("?sslmode=verify-ca").checkConnection(logger: testLogger)
        } throws: { error in
            "\(error)".contains("certificate is not trusted")
        }
        #expect(
            throws: ConfigurationError(
                """
                sslrootcert /nonexistent/ca.pem: no such readable file (a PEM file of the certificate authorities to \
                trust)
                """
            )
        ) {
            try Self.testLocation("?sslmode=verify-full&sslrootcert=%2Fnonexistent%2Fca.pem").clientConfiguration(
                poolSize: 1)
        }
    }

    @Test(
        "a server on verify-full serves writes and reads through its TLS connections",
        arguments: TestBackend.postgresIfAvailable)
    func serverOverVerifiedTLS(_ backend: TestBackend) async throws {
        let table = uniqueTableName("tls")
        let database = DatabaseLocation.postgres(
            try Self.testLocation("?sslmode=verify-full&sslrootcert=\(try Self.testAuthority())"))
        try await withServer(backend, tables: [TableOptions(name: table)], database: database, setup: .live) { client in
            let inserted = try await client.send(.post, "/tables/\(table)", json: ["id": "a", "text": "over TLS"])
            #expect(inserted.status == .created)
            let read = try await client.send(.get, "/tables/\(table)/a")
            #expect(read.status == .ok)
            #expect(try read.json["text"] == "over TLS")
        }
    }
}
