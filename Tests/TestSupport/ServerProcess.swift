import Foundation
import TableSync

/// The built `tablesync-server` executable running as a process of its own on a free loopback port, its log in a
/// file: what tests use when several servers must share nothing but their database, as deployed instances do.
public final class ServerProcess: Sendable {
    /// `http://127.0.0.1:PORT`.
    public let baseURL: String
    /// The file that receives the server's standard output and error.
    public let logPath: String
    private let process: Subprocess.Child

    private init(baseURL: String, logPath: String, process: Subprocess.Child) {
        self.baseURL = baseURL
        self.logPath = logPath
        self.process = process
    }

    /// Starts `tablesync-server ARGUMENTS --port 0 --log-level info` (the build beside the tests, or `executable`)
    /// and returns once its log says which port it listens on; throws with the log when it exits first or says
    /// nothing within `seconds`.
    public static func start(
        _ arguments: [String], logPath: String, environment: [String: String]? = nil,
        seconds: Double = 60, executable: String? = nil
    ) async throws -> ServerProcess {
        let process = try Subprocess.start(
            executable ?? builtProduct("tablesync-server"), arguments + ["--port", "0", "--log-level", "info"],
            environment: environment, output: .file(logPath), errors: .standardOutput)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let port = listeningPort(inLog: text) {
                return ServerProcess(baseURL: "http://127.0.0.1:\(port)", logPath: logPath, process: process)
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.send(SIGKILL)
        _ = await process.waitForExit()
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        throw ServerProcessError(
            description: "tablesync-server \(arguments.joined(separator: " ")) did not start listening:\n\(text)")
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
        process.terminate()
        return await process.waitForExit().status
    }
}

/// A server process that did not start, with its log.
public struct ServerProcessError: Error, CustomStringConvertible {
    public let description: String
}
