import Foundation
import TableSync

/// The built `tablesync-server` executable running as a process of its own on a free loopback port, its log in a
/// file: what tests use when several servers must share nothing but their database, as deployed instances do, and
/// the server the benchmarks measure.
public final class ServerProcess: Sendable {
    /// `http://127.0.0.1:PORT`.
    public let baseURL: String
    /// The loopback port it listens on.
    public let port: UInt16
    /// The file that receives the server's standard output and error.
    public let logPath: String
    private let process: Subprocess.Child

    /// Starts `tablesync-server ARGUMENTS --port 0 --log-level info` (the build beside the tests, or `executable`)
    /// in `directory` (this process's when `nil`) and returns once its log says which port it listens on; throws
    /// with the log when it exits first or says nothing within `seconds`. Blocks the calling thread: tasks call
    /// ``start(_:logPath:environment:directory:seconds:executable:)``.
    public init(
        _ arguments: [String], logPath: String, environment: [String: String]? = nil, directory: String? = nil,
        seconds: Double = 60, executable: String? = nil
    ) throws {
        let process = try Subprocess.start(
            executable ?? builtProduct("tablesync-server"), arguments + ["--port", "0", "--log-level", "info"],
            environment: environment, directory: directory, output: .file(logPath), errors: .standardOutput)
        let deadline = Date().addingTimeInterval(seconds)
        var port: Int?
        while port == nil, process.isRunning, Date() < deadline {
            port = Self.listeningPort(inLog: (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")
            if port == nil { usleep(20_000) }
        }
        guard let port, let loopbackPort = UInt16(exactly: port) else {
            process.send(SIGKILL)
            _ = process.waitUntilExit()
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            throw ServerProcessError(
                description: "tablesync-server \(arguments.joined(separator: " ")) did not start listening:\n\(text)")
        }
        self.port = loopbackPort
        self.baseURL = "http://127.0.0.1:\(port)"
        self.logPath = logPath
        self.process = process
    }

    /// Starts the server as ``init(_:logPath:environment:directory:seconds:executable:)`` does, waiting for its port
    /// on a thread of its own, off the cooperative pool.
    public static func start(
        _ arguments: [String], logPath: String, environment: [String: String]? = nil, directory: String? = nil,
        seconds: Double = 60, executable: String? = nil
    ) async throws -> ServerProcess {
        try await runOnThreadOfItsOwn {
            try ServerProcess(
                arguments, logPath: logPath, environment: environment, directory: directory, seconds: seconds,
                executable: executable)
        }
    }

    /// The port of Hummingbird's "Server started and listening on HOST:PORT" line.
    static func listeningPort(inLog text: String) -> Int? {
        guard let line = text.split(separator: "\n").first(where: { $0.contains("listening on") }),
            let colon = line.lastIndex(of: ":")
        else { return nil }
        return Int(line[line.index(after: colon)...].prefix { $0.isNumber })
    }

    /// The server's log so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The process's id, to read what the system reports of it (`/proc/PID/…`).
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Whether the process still runs.
    public var isRunning: Bool { process.isRunning }

    /// Sends SIGTERM (a graceful stop: requests in flight finish) and waits for the exit, off the cooperative pool.
    /// Returns the exit status.
    @discardableResult
    public func stop() async -> Int32 {
        await stopNotingEnd().status
    }

    /// Stops as ``stop()`` does, and returns the exit status with the instant the exit was seen, taken on the
    /// waiting thread: a task resumes on the shared pool, which other tests' work may keep busy for seconds, so a
    /// clock read after `stop()` returns would time the pool as well as the server.
    public func stopNotingEnd() async -> (status: Int32, ended: ContinuousClock.Instant) {
        process.terminate()
        let process = self.process
        return await runOnThreadOfItsOwn { (process.waitUntilExit().status, ContinuousClock.now) }
    }

    /// Sends SIGTERM and waits for the exit on the calling thread (for synchronous drivers); a later call only
    /// returns the status again.
    @discardableResult
    public func stopWaiting() -> Int32 {
        process.terminate()
        return process.waitUntilExit().status
    }
}

/// A server process that did not start, with its log.
public struct ServerProcessError: Error, CustomStringConvertible {
    public let description: String
}
