#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import TableSync

/// What one finished child process did: how it exited, how long it took, its peak resident memory and what it
/// printed.
struct ChildRun {
    var exitStatus: Int32
    var seconds: Double
    /// The child's peak resident set (`VmHWM`, sampled every 2 ms until it exits), in bytes.
    var peakResidentBytes: Int
    /// The processor time the child spent, user and system (`wait4`'s `rusage`), in seconds.
    var processorSeconds: Double
    var standardOutput: String
    var standardError: String
}

/// A step of the benchmarks failed: what, and why.
struct BenchError: Error, CustomStringConvertible {
    let what: String
    let detail: String
    var description: String { "\(what): \(detail)" }
}

/// Runs programs to their end (through the library's ``Subprocess``), times them, and samples their own peak memory
/// (that of `tablesync`, not of the benchmark driver).
enum ChildProcess {
    /// Runs `executable` with `arguments` to completion; throws when it exits non-zero and `allowFailure` is false.
    /// `environment` is added to this process's own; the child reads `standardInput` (a file's path).
    @discardableResult
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        standardInput: String = "/dev/null", allowFailure: Bool = false
    ) throws -> ChildRun {
        let outputPath = temporaryPath("out")
        let errorPath = temporaryPath("err")
        defer {
            unlink(outputPath)
            unlink(errorPath)
        }
        let began = Clock.now()
        let child = try start(
            executable, arguments, environment: environment, standardInput: standardInput,
            output: .file(outputPath), errors: .file(errorPath))
        // Not `ru_maxrss` from `wait4`: Linux carries the high-water mark of the memory an `exec` replaces into it,
        // and `posix_spawn` execs from the parent's memory, so every child would report at least this process's
        // peak. `VmHWM` in /proc belongs to the child's own memory; it is read every few milliseconds until exit.
        var peakKilobytes = 0
        while child.isRunning {
            peakKilobytes = max(peakKilobytes, Self.memoryKilobytes(child.processIdentifier, "VmHWM") ?? 0)
            usleep(2_000)
        }
        let ended = child.waitUntilExit()
        let seconds = Clock.now() - began
        let run = ChildRun(
            exitStatus: ended.shellStatus, seconds: seconds, peakResidentBytes: peakKilobytes * 1024,
            processorSeconds: ended.processorSeconds,
            standardOutput: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")
        if ended.shellStatus != 0 && !allowFailure {
            let command = ([executable] + arguments).joined(separator: " ")
            throw BenchError(
                what: command, detail: "exit \(run.exitStatus): \(run.standardError)\(run.standardOutput.suffix(2000))")
        }
        return run
    }

    /// Starts `executable` without waiting; it reads `standardInput` (a file's path) and its outputs go to
    /// `/dev/null` unless given, and `environment` is added to this process's own.
    static func start(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        standardInput: String = "/dev/null", output: Subprocess.Output = .nothing, errors: Subprocess.Output = .nothing
    ) throws -> Subprocess.Child {
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        return try Subprocess.start(
            executable, arguments, environment: merged, input: .file(standardInput), output: output, errors: errors)
    }

    /// The processor time process `pid` has spent so far, user and system, all its threads (its CPU-time clock,
    /// in nanoseconds, where /proc's counts are in ticks of 10 ms), or `nil` once it is gone.
    static func processorSeconds(of pid: pid_t) -> Double? {
        #if os(Linux)
        var clock = clockid_t()
        var time = timespec()
        guard clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &time) == 0 else { return nil }
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        #else
        return nil
        #endif
    }

    /// A memory figure of process `pid` from /proc (`VmRSS`, `VmHWM`) in kB, or `nil` once it is gone.
    static func memoryKilobytes(_ pid: pid_t, _ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }

    private static func temporaryPath(_ suffix: String) -> String {
        NSTemporaryDirectory() + "/tablesync-bench-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).\(suffix)"
    }
}

/// Monotonic seconds, for timing.
enum Clock {
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
