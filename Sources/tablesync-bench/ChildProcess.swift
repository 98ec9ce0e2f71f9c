#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

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

/// Starts programs with `posix_spawn`, times them, and samples their own peak memory (that of `tablesync`,
/// not of the benchmark driver).
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
        let start = Clock.now()
        let pid = try spawn(
            executable, arguments, standardInput: standardInput, standardOutput: outputPath,
            standardError: errorPath, environment: environment)
        // Not `ru_maxrss` from `wait4`: Linux carries the high-water mark of the memory an `exec` replaces into it,
        // and `posix_spawn` execs from the parent's memory, so every child would report at least this process's
        // peak. `VmHWM` in /proc belongs to the child's own memory; it is read every few milliseconds until exit.
        var status: Int32 = 0
        var peakKilobytes = 0
        var usage = rusage()
        while true {
            let result = wait4(pid, &status, WNOHANG, &usage)
            if result == pid { break }
            if result < 0 && errno != EINTR {
                throw BenchError(what: executable, detail: "wait4 failed: errno \(errno)")
            }
            peakKilobytes = max(peakKilobytes, Self.memoryKilobytes(pid, "VmHWM") ?? 0)
            usleep(2_000)
        }
        let seconds = Clock.now() - start
        let exitStatus = Self.exitStatus(status)
        let run = ChildRun(
            exitStatus: exitStatus, seconds: seconds, peakResidentBytes: peakKilobytes * 1024,
            processorSeconds: Self.processorSeconds(usage),
            standardOutput: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")
        if exitStatus != 0 && !allowFailure {
            let command = ([executable] + arguments).joined(separator: " ")
            throw BenchError(
                what: command, detail: "exit \(exitStatus): \(run.standardError)\(run.standardOutput.suffix(2000))")
        }
        return run
    }

    /// Starts `executable` without waiting; it reads `standardInput` and writes to the given files (all
    /// `/dev/null` unless given), and `environment` is added to this process's own.
    static func spawn(
        _ executable: String, _ arguments: [String], standardInput: String = "/dev/null",
        standardOutput: String = "/dev/null", standardError: String = "/dev/null",
        environment: [String: String] = [:]
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard result == 0 else { throw BenchError(what: executable, detail: "posix_spawn failed: errno \(result)") }
        return pid
    }

    /// The exit status of a child as a shell gives it: its own, or 128 plus the signal that ended it.
    static func exitStatus(_ waitStatus: Int32) -> Int32 {
        (waitStatus & 0x7F) == 0 ? (waitStatus >> 8) & 0xFF : 128 + (waitStatus & 0x7F)
    }

    /// The user and system time in `usage`, in seconds.
    static func processorSeconds(_ usage: rusage) -> Double {
        [usage.ru_utime, usage.ru_stime].reduce(0) { $0 + Double($1.tv_sec) + Double($1.tv_usec) / 1e6 }
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
