import Foundation

/// A PostgreSQL cluster of a test's own, in a temporary directory and on a loopback port of its own, for tests that
/// stop and start the database under a running server (the shared test cluster must stay up for the others).
///
/// The binaries are the `postgresql` package's, found as `scripts/postgres-for-tests.sh` finds them; as root the
/// cluster belongs to the `postgres` user, since `initdb` refuses root. Authentication is `trust` unless
/// `password` is given, which makes every connection over TCP need it (`scram-sha-256`).
public final class PostgresCluster: Sendable {
    /// The loopback port it listens on.
    public let port: Int
    /// The user that owns the cluster, and the one tests connect as.
    public let owner: String
    private let directory: String
    private let binaries: String

    /// `postgres://OWNER@127.0.0.1:PORT/postgres`.
    public var url: String { "postgres://\(owner)@127.0.0.1:\(port)/postgres" }

    private var data: String { directory + "/data" }

    private init(port: Int, owner: String, directory: String, binaries: String) {
        self.port = port
        self.owner = owner
        self.directory = directory
        self.binaries = binaries
    }

    /// Makes a cluster for `port` and starts it; `nil` when PostgreSQL's binaries are not installed.
    public static func start(port: Int, password: String? = nil) async throws -> PostgresCluster? {
        let found = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard
            let binaries = found.sorted().reversed().map({ "/usr/lib/postgresql/\($0)/bin" }).first(where: {
                FileManager.default.isExecutableFile(atPath: $0 + "/initdb")
            })
        else { return nil }
        let asRoot = getuid() == 0
        let owner = asRoot ? "postgres" : ProcessInfo.processInfo.userName
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tablesync-cluster-\(port)-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory + "/sockets", withIntermediateDirectories: true)
        let cluster = PostgresCluster(port: port, owner: owner, directory: directory, binaries: binaries)
        var initArguments = ["-D", cluster.data, "-U", owner, "--encoding=UTF8", "--locale=C.UTF-8"]
        let passwordFile = directory + "/password"
        if let password { try password.write(toFile: passwordFile, atomically: true, encoding: .utf8) }
        if asRoot { try await cluster.run("/bin/chown", ["-R", "postgres:", directory], asOwner: false) }
        if password != nil {
            initArguments += ["--auth-local=trust", "--auth-host=scram-sha-256", "--pwfile=\(passwordFile)"]
        } else {
            initArguments += ["--auth=trust"]
        }
        try await cluster.run(binaries + "/initdb", initArguments)
        try await cluster.start()
        return cluster
    }

    /// Starts the cluster and returns once it accepts connections.
    public func start() async throws {
        try await run(
            binaries + "/pg_ctl",
            [
                "-D", data, "-l", directory + "/postgres.log", "-w", "-t", "60", "-o",
                "-c listen_addresses=127.0.0.1 -p \(port) -k \(directory)/sockets -c fsync=off", "start"
            ])
    }

    /// Stops the cluster as an administrator's fast shutdown does (`pg_ctl stop -m fast`): sessions are ended, and
    /// it returns once the database is down.
    public func stop() async throws {
        try await run(binaries + "/pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
    }

    /// Stops the cluster if it runs and deletes its directory.
    public func remove() async {
        if FileManager.default.fileExists(atPath: data + "/postmaster.pid") { try? await stop() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func run(_ program: String, _ arguments: [String], asOwner: Bool = true) async throws {
        let (path, all) =
            asOwner && getuid() == 0
            ? ("/usr/sbin/runuser", ["-u", owner, "--", program] + arguments)
            : (program, arguments)
        let result = try await runProgram(path, all)
        guard result.status == 0 else {
            throw ServerProcessError(
                description: "\(program) \(arguments.joined(separator: " ")) failed: \(result.stderr)\(result.stdout)")
        }
    }
}
