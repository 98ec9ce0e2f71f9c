import Foundation
import Testing
import TestSupport

/// Every way a start commonly goes wrong ends the built `tablesync-server` with exit status 2 and one sentence that
/// names what to fix, never a library's raw error; a database that is still starting is waited for; SIGTERM is
/// logged as it begins and as it ends.
@Suite("Start-up failures")
struct StartupFailureTests {
    let server = builtProduct("tablesync-server")

    /// The environment without a database or password of the caller's.
    static let environment = ProcessInfo.processInfo.environment.filter {
        !["PGPASSWORD", "TABLESYNC_SERVER_DATABASE", "TABLESYNC_SERVER_TOKENS"].contains($0.key)
    }

    /// Runs the server with `arguments`, expects exit status 2, and returns its one sentence (the line after
    /// `tablesync-server: `), recording an issue unless there is exactly one.
    private func refusal(_ arguments: [String], environment: [String: String] = environment) async throws -> String {
        let run = try await runProgram(server, arguments + ["--log-level", "info"], environment: environment)
        #expect(run.status == 2, "\(run.stderr)")
        let sentences = run.stderr.split(separator: "\n").filter { $0.hasPrefix("tablesync-server: ") }
        #expect(sentences.count == 1, "\(run.stderr)")
        for raw in ["errno", "NIO", "SQLite error", "PSQLError", "authMechanism", "SingleConnectionFailure"] {
            #expect(!run.stderr.contains(raw), "a library's own words: \(run.stderr)")
        }
        return String(sentences.first?.dropFirst("tablesync-server: ".count) ?? "")
    }

    @Test("a port in use is named")
    func portInUse() async throws {
        let directory = TemporaryDirectory()
        let first = try await ServerProcess.start(
            ["--database", "sqlite:" + directory.file("a.sqlite")], logPath: directory.file("a.log"))
        let port = try #require(Int(first.baseURL.split(separator: ":").last ?? ""))
        let sentence = try await refusal(["--database", "sqlite:" + directory.file("b.sqlite"), "--port", "\(port)"])
        await first.stop()
        #expect(
            sentence
                == """
                cannot listen on 127.0.0.1:\(port): another program uses the port; stop it, or choose another \
                --port
                """
        )
    }

    @Test("a SQLite database in a folder that does not exist names the folder and the path")
    func sqliteFolderMissing() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("missing/server.sqlite")
        let sentence = try await refusal(["--database", "sqlite:" + path, "--port", "0"])
        #expect(
            sentence
                == """
                the folder \(directory.file("missing")) of the SQLite database \(path) does not exist; create it, or \
                give another path
                """)
    }

    @Test("a SQLite path SQLite cannot open (a folder) names the path")
    func sqliteCannotOpen() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("server.sqlite")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let sentence = try await refusal(["--database", "sqlite:" + path, "--port", "0"])
        #expect(
            sentence
                == """
                cannot open the SQLite database \(path) (unable to open database file); it must be a file the \
                server's user may read and write, in a folder it may write
                """)
    }

    @Test("a JWKS file that cannot be read stops the start")
    func jwksFileUnreadable() async throws {
        let directory = TemporaryDirectory()
        let sentence = try await refusal([
            "--database", "sqlite:" + directory.file("server.sqlite"), "--port", "0", "--jwt-jwks",
            directory.file("jwks.json"), "--jwt-issuer", "https://issuer.example", "--jwt-audience", "tablesync"
        ])
        #expect(sentence.hasPrefix("the JWKS file \(directory.file("jwks.json")) cannot be used"), "\(sentence)")
    }

    @Test("a JWKS file that parses but holds no usable key stops the start (a provider's encryption-only set)")
    func jwksFileWithoutUsableKey() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("jwks.json")
        // An encryption key and an HS256 secret: a JWKS by form, but nothing the server can check a token with.
        let keys = [
            #"{"kty":"RSA","use":"enc","kid":"e1","n":"AQAB","e":"AQAB"}"#, #"{"kty":"oct","kid":"s1","k":"c2VjcmV0"}"#
        ]
        try Data(#"{"keys":[\#(keys.joined(separator: ","))]}"#.utf8).write(to: URL(fileURLWithPath: path))
        let sentence = try await refusal([
            "--database", "sqlite:" + directory.file("server.sqlite"), "--port", "0", "--jwt-jwks", path,
            "--jwt-issuer", "https://issuer.example", "--jwt-audience", "tablesync"
        ])
        #expect(
            sentence
                == """
                the JWKS file \(path) holds no key this server can check tokens with; it needs signing keys with a \
                kid, RSA for RS256 or EC P-256 for ES256
                """)
    }

    @Test("PostgreSQL refusing connections names host and port, after waiting --database-wait for it")
    func postgresRefused() async throws {
        let url = "postgres://tablesync@127.0.0.1:25443/tablesync"
        let sentence = try await refusal(["--database", url, "--port", "0", "--database-wait", "0"])
        #expect(
            sentence
                == """
                cannot connect to PostgreSQL at \(url): nothing accepts connections at 127.0.0.1:25443; start \
                PostgreSQL there, or correct the host and port
                """)
        let started = ContinuousClock.now
        let waited = try await runProgram(
            server, ["--database", url, "--port", "0", "--database-wait", "1"], environment: Self.environment)
        #expect(waited.status == 2)
        #expect(ContinuousClock.now - started >= .milliseconds(500), "it tried again for about a second")
        #expect(waited.stderr.components(separatedBy: "waiting for PostgreSQL").count == 2, "\(waited.stderr)")
    }

    @Test(
        """
        PostgreSQL wanting a password says where to put it; one still starting is waited for; SIGTERM logs stopping \
        and stopped
        """)
    func postgresPasswordWaitAndStop() async throws {
        guard let cluster = try await PostgresCluster.start(port: 25442, password: "startup-test-password") else {
            Issue.record("PostgreSQL's binaries are not installed (scripts/install-deps.sh installs them)")
            return
        }
        let directory = TemporaryDirectory()
        do {
            let sentence = try await refusal(["--database", cluster.url, "--port", "0"])
            #expect(
                sentence
                    == """
                    cannot connect to PostgreSQL at \(cluster.url): the database wants a password: set PGPASSWORD or \
                    put it in the URL
                    """)

            try await cluster.stop()
            var environment = Self.environment
            environment["PGPASSWORD"] = "startup-test-password"
            let logPath = directory.file("server.log")
            async let starting = ServerProcess.start(
                ["--database", cluster.url, "--database-wait", "60"], logPath: logPath, environment: environment)
            var log = ""
            let deadline = ContinuousClock.now + .seconds(60)
            while !log.contains("waiting for PostgreSQL"), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            }
            #expect(log.contains("waiting for PostgreSQL"), "\(log)")
            try await cluster.start()
            let server = try await starting
            let answer = try #require(try await Self.get(server.baseURL, "/health/ready"))
            #expect(answer.status == 200)
            #expect(await server.stop() == 0)
            let lines = server.log.split(separator: "\n")
            #expect(lines.filter { $0.hasSuffix("] stopping") }.count == 1, "\(server.log)")
            #expect(lines.last?.hasSuffix("] stopped") == true, "\(server.log)")
            #expect(lines.filter { $0.contains("waiting for PostgreSQL") }.count == 1, "\(server.log)")
        } catch {
            await cluster.remove()
            throw error
        }
        await cluster.remove()
    }

    private static func get(_ baseURL: String, _ path: String) async throws -> RawHTTPConnection.Answer? {
        let port = try #require(Int(baseURL.split(separator: ":").last ?? ""))
        let connection = try #require(RawHTTPConnection(port: port))
        await connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return await connection.readAnswer(within: 10)
    }
}
