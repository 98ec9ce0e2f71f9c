import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Subprocess {
    /// Where a child's standard output or standard error goes, when it runs beside this process.
    package enum Output: Sendable, Equatable {
        /// `/dev/null`.
        case nothing
        /// This process's own.
        case inherited
        /// The file at this path, created or emptied.
        case file(String)
        /// A pipe (a connected socket) that this process reads: ``Child/standardOutput`` or ``Child/standardError``.
        case pipe
        /// A descriptor open in this process (the terminal side of a pseudo-terminal, say), which stays open here.
        case descriptor(Int32)
        /// Where standard output goes (for standard error; for standard output itself it is ``inherited``).
        case standardOutput
    }

    /// Starts `path` with `arguments` and `environment` (this process's when `nil`) in `directory` (this process's
    /// when `nil`), and returns it running: a server, a watch, a run whose output is read as it comes.
    package static func start(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        input: Input = .nothing, output: Output = .nothing, errors: Output = .nothing
    ) throws(StartFailure) -> Child {
        let standardInput = try openInput(input)
        defer { close(standardInput) }
        let outputEnds = try OutputEnds.make(output == .standardOutput ? .inherited : output)
        let errorEnds: OutputEnds
        do {
            errorEnds = errors == .standardOutput ? outputEnds.sharingChildEnd() : try OutputEnds.make(errors)
        } catch {
            outputEnds.closeAll()
            throw error
        }
        let pid: pid_t
        do {
            defer {
                outputEnds.closeChildEnd()
                errorEnds.closeChildEnd()
            }
            pid = try spawn(
                path, arguments, environment: environment, directory: directory,
                streams: [standardInput, outputEnds.child, errorEnds.child])
        } catch {
            outputEnds.closeAll()
            errorEnds.closeAll()
            throw error
        }
        return Child(
            processIdentifier: pid, standardOutput: outputEnds.parentHandle, standardError: errorEnds.parentHandle)
    }

    /// How a child ended.
    package struct Termination: Sendable, Equatable {
        /// The exit status, or the number of the signal that ended it (``killed``).
        package var status: Int32
        /// Whether a signal ended the child (its ``status`` is the signal's number).
        package var killed: Bool
        /// The processor time the child spent, user and system, in seconds (`wait4`'s `rusage`).
        package var processorSeconds: Double

        /// The status as a shell gives it: the child's own, or 128 plus the number of the signal that ended it.
        package var shellStatus: Int32 { killed ? 128 + status : status }

        init(status: Int32, killed: Bool, processorSeconds: Double) {
            self.status = status
            self.killed = killed
            self.processorSeconds = processorSeconds
        }

        init(waitStatus: Int32, usage: rusage) {
            let signal = waitStatus & 0x7f
            status = signal == 0 ? (waitStatus >> 8) & 0xff : signal
            killed = signal != 0
            processorSeconds = [usage.ru_utime, usage.ru_stime].reduce(0) {
                $0 + Double($1.tv_sec) + Double($1.tv_usec) / 1e6
            }
        }
    }

    /// A child running beside this process (``Subprocess/start(_:_:environment:directory:input:output:errors:)``):
    /// its id, the pipes it writes to, signals, and its end.
    ///
    /// A child nobody waits for stays a zombie until this process ends; every user waits, or kills and waits.
    package final class Child: Sendable {
        /// The child's process id (for `/proc/PID/…`).
        package let processIdentifier: pid_t
        /// What the child writes on standard output, when it goes to a ``Output/pipe``.
        package let standardOutput: FileHandle?
        /// What the child writes on standard error, when it goes to a ``Output/pipe``.
        package let standardError: FileHandle?
        /// How it ended, once reaped. A lock rather than an actor: `isRunning` and the blocking wait are synchronous
        /// (the benchmarks' drivers are), and the lock is never held while waiting.
        private let ended = Mutex<Termination?>(nil)

        init(processIdentifier: pid_t, standardOutput: FileHandle?, standardError: FileHandle?) {
            self.processIdentifier = processIdentifier
            self.standardOutput = standardOutput
            self.standardError = standardError
        }

        /// Whether the child still runs (it is not yet reaped: an ended child is reaped here).
        package var isRunning: Bool { reaped() == nil }

        /// Sends `signal` to the child, unless it has ended (its id may then be another process's).
        package func send(_ signal: Int32) {
            guard isRunning else { return }
            _ = kill(processIdentifier, signal)
        }

        /// Sends SIGTERM: the graceful stop that systemd and a person's `kill` ask for.
        package func terminate() { send(SIGTERM) }

        /// Waits for the child's end, blocking the calling thread, and returns how it ended.
        package func waitUntilExit() -> Termination {
            while true {
                if let termination = reaped() { return termination }
                // Waits for the exit without reaping it (`WNOWAIT`), so that the reaping happens under the lock.
                var information = siginfo_t()
                if waitid(P_PID, id_t(processIdentifier), &information, WEXITED | WNOWAIT) < 0 && errno == ECHILD {
                    // Reaped since, here or (against this type's use) by a `waitpid` of someone else's.
                    return reaped() ?? Termination(status: -1, killed: false, processorSeconds: 0)
                }
            }
        }

        /// Waits for the child's end on a thread of its own (off the shared pool), and returns how it ended.
        package func waitForExit() async -> Termination {
            await runOnThreadOfItsOwn { self.waitUntilExit() }
        }

        /// How the child ended, reaping it if it has ended since; `nil` while it runs.
        private func reaped() -> Termination? {
            ended.withLock { ended in
                if let ended { return ended }
                var status: Int32 = 0
                var usage = rusage()
                guard wait4(processIdentifier, &status, WNOHANG, &usage) == processIdentifier else { return nil }
                ended = Termination(waitStatus: status, usage: usage)
                return ended
            }
        }
    }
}

/// One standard output of a child being started: the descriptor the child gets (`nil`: this process's own), the end
/// this process reads (a pipe's), and whether the child's descriptor is closed here once the child has it.
private struct OutputEnds {
    var child: Int32?
    var parent: Int32?
    var ownsChildEnd: Bool

    static func make(_ output: Subprocess.Output) throws(Subprocess.StartFailure) -> OutputEnds {
        switch output {
        case .nothing: return try openFile("/dev/null", O_WRONLY)
        case .inherited, .standardOutput: return OutputEnds(child: nil, parent: nil, ownsChildEnd: false)
        case .file(let path): return try openFile(path, O_WRONLY | O_CREAT | O_TRUNC)
        case .pipe:
            let ends = try Subprocess.socketPair()
            return OutputEnds(child: ends.child, parent: ends.parent, ownsChildEnd: true)
        case .descriptor(let descriptor): return OutputEnds(child: descriptor, parent: nil, ownsChildEnd: false)
        }
    }

    private static func openFile(_ path: String, _ flags: Int32) throws(Subprocess.StartFailure) -> OutputEnds {
        let descriptor = open(path, flags | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw Subprocess.StartFailure(description: "could not open \(path): \(Subprocess.errorText(errno))")
        }
        return OutputEnds(child: descriptor, parent: nil, ownsChildEnd: true)
    }

    /// Standard error on standard output's descriptor: one file offset, so neither overwrites the other.
    func sharingChildEnd() -> OutputEnds { OutputEnds(child: child, parent: nil, ownsChildEnd: false) }

    /// The end this process reads, as a handle that closes it when it goes.
    var parentHandle: FileHandle? { parent.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) } }

    func closeChildEnd() {
        if ownsChildEnd, let child { close(child) }
    }

    func closeAll() {
        closeChildEnd()
        if let parent { close(parent) }
    }
}
