#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import TableSyncStorage

/// The client's token and where it comes from, in this order: `TABLESYNC_TOKEN`; the file named by `tokenFile` in
/// `tablesync.json`; the output of `tokenCommand` (run through `/bin/sh -c`, its first line), as git's credential
/// helpers and kubectl's exec plugins give short-lived tokens to a program. The token is read when the first request
/// needs it, and once more when the server refuses it (401): a file is read again, a command run again, so that a
/// cron job keeps working across the token's expiry without a failure. A token that the environment fixes is not
/// renewed.
///
/// The token goes into `Authorization: Bearer` and `X-ZUMO-AUTH` and nowhere else: not into the store, a log line
/// or an error message (a failing command is reported by its exit status; what it prints on standard error is its
/// own, and goes to this process's standard error).
actor ClientCredentials {
    /// Where the token comes from.
    enum Source: Sendable, Equatable {
        case none
        /// `TABLESYNC_TOKEN`: fixed for the run.
        case environment(String)
        case file(String)
        case command(String)
    }

    /// The environment variable that holds a token.
    static let environmentVariable = "TABLESYNC_TOKEN"
    /// How long `tokenCommand` may run before it counts as failed.
    static let commandTimeout: Double = 60

    let source: Source
    /// The token as last read: `.none` before the first read.
    private var current: String??
    /// The read of the token under way, which every request that needs the token meanwhile waits for.
    private var inFlight: Task<String?, any Error>?

    /// The credentials `settings` and `environment` name.
    init(settings: StoreSettings, environment: [String: String]) {
        if let token = environment[Self.environmentVariable], !token.isEmpty {
            source = .environment(token)
        } else if let path = settings.tokenFile {
            source = .file(path)
        } else if let command = settings.tokenCommand {
            source = .command(command)
        } else {
            source = .none
        }
    }

    /// The token to send, read from its source the first time. Requests that start together share one read.
    func token() async throws -> String? {
        if let current { return current }
        return try await reading().value
    }

    /// A token to send instead of `rejected`, which the server refused: the token read again, when its source can
    /// give another; `nil` when it cannot (the refusal then stands). Requests refused together share one read.
    func renewed(after rejected: String?) async throws -> String? {
        switch source {
        case .none, .environment: return nil
        case .file, .command: break
        }
        if inFlight == nil, let current, current != rejected { return current }
        if inFlight == nil { current = nil }
        let token = try await reading().value
        return token == rejected ? nil : token
    }

    /// The read under way, or a new one: what it reads becomes ``current``.
    private func reading() -> Task<String?, any Error> {
        if let inFlight { return inFlight }
        let task = Task { try await read() }
        inFlight = task
        Task {
            let result = await task.result
            finish(result)
        }
        return task
    }

    private func finish(_ result: Result<String?, any Error>) {
        inFlight = nil
        if case .success(let token) = result { current = .some(token) }
    }

    private func read() async throws -> String? {
        switch source {
        case .none: return nil
        case .environment(let token): return token
        case .file(let path):
            do {
                let token = String(decoding: try FileSystem.readFile(path), as: UTF8.self).trimmingWhitespace()
                return token.isEmpty ? nil : token
            } catch let error as FileSystemError {
                throw SyncError.tokenUnavailable(source: "the token file \(path)", reason: "\(error)")
            }
        case .command(let command):
            return try await Self.run(command)
        }
    }

    /// Runs `command` with the shell and returns the first line it prints; throws
    /// ``SyncError/tokenUnavailable(source:reason:)``
    /// naming `tokenCommand` when it fails, outlasts ``commandTimeout`` or prints nothing. It runs on a thread of its
    /// own, off the cooperative pool, as a child process is waited for.
    private static func run(_ command: String) async throws -> String {
        try await runOnThreadOfItsOwn { try runBlocking(command) }
    }

    /// How an error names a `tokenCommand`.
    private static let commandSource = "the tokenCommand of tablesync.json"

    private static func runBlocking(_ command: String) throws -> String {
        let run: Subprocess.Result
        do {
            // What it prints on standard error is the user's to read, as it prints it.
            run = try Subprocess.run(
                "/bin/sh", ["-c", command], errors: .inherited, timeout: .seconds(commandTimeout))
        } catch {
            throw SyncError.tokenUnavailable(source: Self.commandSource, reason: "it could not be started (\(error))")
        }
        guard !run.killed, run.status == 0 else {
            let how =
                run.killed
                ? "ended by signal \(run.status), after \(Int(commandTimeout)) s at most" : "exit \(run.status)"
            throw SyncError.tokenUnavailable(
                source: Self.commandSource, reason: "it failed (\(how)); what it printed on standard error is its own")
        }
        let bytes = run.output
        let token =
            String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map { String($0).trimmingWhitespace() }
            ?? ""
        guard !token.isEmpty else {
            throw SyncError.tokenUnavailable(source: Self.commandSource, reason: "it printed no token")
        }
        return token
    }
}
