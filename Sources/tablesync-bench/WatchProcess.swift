#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SyncProtocol
import TableSync

/// `tablesync watch --json` on a store, as a child process for the live-sync benchmarks (W1, W2): its events read
/// from the file its standard output goes to, its processor time read while it runs, and stopped with SIGTERM, as
/// systemd stops it.
final class WatchProcess {
    let store: String
    private let child: Subprocess.Child
    private let outputPath: String
    private let errorPath: String

    /// Starts `tablesync watch --json` (`executable`) on `store`; its standard output and error go to files beside
    /// the store (`STORE.watch.out`, `STORE.watch.err`), kept with the work directory.
    init(executable: String, store: String) throws {
        self.store = store
        outputPath = store + ".watch.out"
        errorPath = store + ".watch.err"
        child = try ChildProcess.start(
            executable, ["-C", store, "watch", "--json"], output: .file(outputPath), errors: .file(errorPath))
    }

    deinit {
        child.send(SIGKILL)
        _ = child.waitUntilExit()
    }

    /// The events told so far, one JSON object each, in order.
    func events() -> [JSONValue] {
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // The last line may be half written.
        return text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
    }

    /// The names of the events told so far (`started`, `pushed`, `synced`, …).
    func eventNames() -> [String] {
        events().compactMap { $0["event"]?.stringValue }
    }

    /// Waits until the watch has told `started`.
    /// - Throws: ``BenchError`` when it exits first, or after `seconds`.
    func waitForStart(seconds: Double = 60) throws {
        let deadline = Clock.now() + seconds
        while !eventNames().contains("started") {
            guard child.isRunning else {
                throw BenchError(
                    what: "tablesync watch on \(store)",
                    detail: "exit \(child.waitUntilExit().shellStatus) before it started: \(standardError())")
            }
            guard Clock.now() < deadline else {
                throw BenchError(what: "tablesync watch on \(store)", detail: "not started after \(seconds) s")
            }
            usleep(10_000)
        }
    }

    /// The processor time the watch has spent so far, user and system, all its threads.
    func processorSeconds() throws -> Double {
        guard let seconds = ChildProcess.processorSeconds(of: child.processIdentifier) else {
            throw BenchError(what: "tablesync watch on \(store)", detail: "its processor time cannot be read")
        }
        return seconds
    }

    /// Sends SIGTERM and waits for the exit.
    /// - Returns: the exit status and the processor time of its whole life (`wait4`).
    /// - Throws: ``BenchError`` when it has not exited `seconds` after the signal (it is then killed).
    func stop(seconds: Double = 60) throws -> (exitStatus: Int32, processorSeconds: Double) {
        child.terminate()
        let deadline = Clock.now() + seconds
        while child.isRunning {
            guard Clock.now() < deadline else {
                child.send(SIGKILL)
                _ = child.waitUntilExit()
                throw BenchError(
                    what: "tablesync watch on \(store)", detail: "still running \(seconds) s after SIGTERM; killed")
            }
            usleep(10_000)
        }
        let ended = child.waitUntilExit()
        return (ended.shellStatus, ended.processorSeconds)
    }

    /// What the watch wrote to standard error (its last 2,000 characters).
    func standardError() -> String {
        String(((try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "").suffix(2000))
    }
}
