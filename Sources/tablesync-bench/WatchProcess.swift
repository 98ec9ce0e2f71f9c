#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SyncProtocol

/// `tablesync watch --json` on a store, as a child process for the live-sync benchmarks (W1, W2): its events read
/// from the file its standard output goes to, its processor time read while it runs, and stopped with SIGTERM, as
/// systemd stops it.
final class WatchProcess {
    let pid: pid_t
    let store: String
    private let outputPath: String
    private let errorPath: String
    private var exited = false

    /// Starts `tablesync watch --json` (`executable`) on `store`; its standard output and error go to files beside
    /// the store (`STORE.watch.out`, `STORE.watch.err`), kept with the work directory.
    init(executable: String, store: String) throws {
        self.store = store
        outputPath = store + ".watch.out"
        errorPath = store + ".watch.err"
        pid = try ChildProcess.spawn(
            executable, ["-C", store, "watch", "--json"], standardOutput: outputPath, standardError: errorPath)
    }

    deinit {
        if !exited {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
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
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                exited = true
                throw BenchError(
                    what: "tablesync watch on \(store)",
                    detail: "exit \(ChildProcess.exitStatus(status)) before it started: \(standardError())")
            }
            guard Clock.now() < deadline else {
                throw BenchError(what: "tablesync watch on \(store)", detail: "not started after \(seconds) s")
            }
            usleep(10_000)
        }
    }

    /// The processor time the watch has spent so far, user and system, all its threads.
    func processorSeconds() throws -> Double {
        guard let seconds = ChildProcess.processorSeconds(of: pid) else {
            throw BenchError(what: "tablesync watch on \(store)", detail: "its processor time cannot be read")
        }
        return seconds
    }

    /// Sends SIGTERM and waits for the exit.
    /// - Returns: the exit status and the processor time of its whole life (`wait4`).
    /// - Throws: ``BenchError`` when it has not exited `seconds` after the signal (it is then killed).
    func stop(seconds: Double = 60) throws -> (exitStatus: Int32, processorSeconds: Double) {
        kill(pid, SIGTERM)
        let deadline = Clock.now() + seconds
        var status: Int32 = 0
        var usage = rusage()
        while true {
            let result = wait4(pid, &status, WNOHANG, &usage)
            if result == pid { break }
            if result < 0 && errno != EINTR {
                throw BenchError(what: "tablesync watch on \(store)", detail: "wait4 failed: errno \(errno)")
            }
            guard Clock.now() < deadline else {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                exited = true
                throw BenchError(
                    what: "tablesync watch on \(store)", detail: "still running \(seconds) s after SIGTERM; killed")
            }
            usleep(10_000)
        }
        exited = true
        return (ChildProcess.exitStatus(status), ChildProcess.processorSeconds(usage))
    }

    /// What the watch wrote to standard error (its last 2,000 characters).
    func standardError() -> String {
        String(((try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "").suffix(2000))
    }
}
