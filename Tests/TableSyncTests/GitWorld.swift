import Foundation
import SyncProtocol
import Testing
import TestSupport

/// A directory of stores and git repositories, the server they sync with, and the environment both programs
/// run in (a git identity of its own, no system or user git config).
final class GitWorld: Sendable {
    let directory = TemporaryDirectory()
    let server: LiveServer
    let environment: [String: String]

    init() async throws {
        server = try await LiveServer.start(.sqlite, tables: ["todo"])
        environment = Self.environment(home: directory.path)
    }

    /// The environment both programs run in: `PATH`, `home` as `HOME`, no system git config, a git identity.
    static func environment(home: String) -> [String: String] {
        var environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        environment["HOME"] = home
        environment["GIT_CONFIG_NOSYSTEM"] = "1"
        for role in ["AUTHOR", "COMMITTER"] {
            environment["GIT_\(role)_NAME"] = "TableSync test"
            environment["GIT_\(role)_EMAIL"] = "test@tablesync.invalid"
        }
        return environment
    }

    func path(_ relative: String) -> String { directory.file(relative) }

    /// Runs `tablesync -C <repository>/store arguments`.
    @discardableResult
    func tablesync(
        _ repository: String, _ arguments: String...
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        let run = try await runProgram(
            builtProduct("tablesync"), ["-C", path(repository) + "/store"] + arguments, environment: environment)
        return (run.status, run.stdout, run.stderr)
    }

    /// Runs `tablesync -C <repository>/store arguments` with `changes` made to the environment (a `nil` value unsets).
    func tablesync(
        _ repository: String, arguments: [String], environment changes: [String: String?]
    ) async throws
        -> (status: Int32, stdout: String, stderr: String)
    {
        var environment = self.environment
        for (name, value) in changes { environment[name] = value }
        let run = try await runProgram(
            builtProduct("tablesync"), ["-C", path(repository) + "/store"] + arguments, environment: environment)
        return (run.status, run.stdout, run.stderr)
    }

    /// `tablesync … --json`, parsed; records an issue when the exit status is not `status`.
    func tablesyncJSON(
        _ repository: String, _ arguments: String..., status: Int32 = 0,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSONValue {
        let run = try await runProgram(
            builtProduct("tablesync"), ["-C", path(repository) + "/store"] + arguments + ["--json"],
            environment: environment)
        #expect(
            run.status == status, "tablesync \(arguments): \(run.stdout) \(run.stderr)", sourceLocation: sourceLocation)
        return try JSONParser.parse(Array(run.stdout.utf8))
    }

    /// Runs `git -C <directory> arguments`; records an issue when it fails, unless `mayFail`.
    @discardableResult
    func git(
        _ repository: String, _ arguments: String..., mayFail: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (status: Int32, stdout: String) {
        let run = try await runProgram(
            "/usr/bin/env", ["git", "-C", path(repository)] + arguments, environment: environment)
        if !mayFail {
            #expect(run.status == 0, "git \(arguments): \(run.stdout) \(run.stderr)", sourceLocation: sourceLocation)
        }
        return (run.status, run.stdout)
    }

    /// A repository `name` with a store of `todo` holding records r1…r`count`, synced and committed.
    func seededRepository(_ name: String, count: Int) async throws {
        try FileManager.default.createDirectory(atPath: path(name), withIntermediateDirectories: true)
        try await git(name, "init", "-q", "-b", "main")
        #expect(try await tablesync(name, "init", "--remote", server.baseURL, "--table", "todo").status == 0)
        for number in 1...count {
            try write(name, "r\(number)", #"{"id": "r\#(number)", "text": "item \#(number)", "done": false}"#)
        }
        #expect(try await tablesync(name, "sync", "--commit").status == 0)
    }

    /// A store outside git that stands for other users of the server: it pulls the table, and its edits are
    /// the server's changes.
    func otherUser() async throws {
        #expect(try await tablesync("other", "init", "--remote", server.baseURL, "--table", "todo").status == 0)
        #expect(try await tablesync("other", "sync").status == 0)
    }

    func write(_ repository: String, _ id: String, _ json: String) throws {
        try directory.write("\(repository)/store/tables/todo/\(id).json", json + "\n")
    }

    func record(_ repository: String, _ id: String) throws -> [String: JSONValue]? {
        guard let bytes = FileManager.default.contents(atPath: path("\(repository)/store/tables/todo/\(id).json"))
        else { return nil }
        return try JSONParser.parse(Array(bytes)).objectValue
    }

    /// Edits properties of record `id` in `repository` by hand.
    func edit(_ repository: String, _ id: String, _ changes: [String: JSONValue]) throws {
        var record = try #require(try self.record(repository, id))
        for (name, value) in changes { record[name] = value }
        try directory.write("\(repository)/store/tables/todo/\(id).json", CanonicalJSON.string(.object(record)))
    }

    /// Every record file of `repository`'s store, by id.
    func records(_ repository: String) throws -> [String: [String: JSONValue]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: path("\(repository)/store/tables/todo"))
        var records: [String: [String: JSONValue]] = [:]
        for name in names where name.hasSuffix(".json") {
            let id = String(name.dropLast(5))
            records[id] = try record(repository, id)
        }
        return records
    }

    /// The server's rows of `todo`, deleted ones included, read over HTTP.
    func serverRows() async throws -> [String: [String: JSONValue]] {
        try await Reliability.serverRows(server.baseURL, table: "todo")
    }

    /// The server's live (not deleted) rows of `todo`, by id.
    func liveServerRows() async throws -> [String: [String: JSONValue]] {
        try await serverRows().filter { $0.value["deleted"]?.boolValue != true }
    }

    /// The commit `HEAD` of `repository` names.
    func head(_ repository: String) async throws -> String {
        try await git(repository, "rev-parse", "HEAD").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `git status --porcelain` of `repository`, one entry per line.
    func porcelain(_ repository: String) async throws -> [String] {
        try await git(repository, "status", "--porcelain", "--untracked-files=all").stdout.split(separator: "\n").map(
            String.init)
    }

    /// The paths git lists as unmerged in `repository`.
    func unmerged(_ repository: String) async throws -> [String] {
        try await git(repository, "diff", "--name-only", "--diff-filter=U").stdout.split(separator: "\n").map(
            String.init)
    }

    /// A clone `name` of `source` with the merge driver set up and its first sync made (nothing sent).
    func syncedClone(_ source: String, _ name: String) async throws {
        try await git(".", "clone", "-q", source, name)
        #expect(try await tablesync(name, "git-setup").status == 0)
        let first = try await tablesyncJSON(name, "sync")
        #expect(first["push"]?["applied"] == 0, "a clone's first sync sends nothing: \(first)")
    }

    func stop() async {
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }
}
