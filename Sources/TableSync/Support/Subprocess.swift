import CFileSystem
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Child processes, started with `posix_spawn`: how TableSync runs `git` and a token command to their end
/// (``run(_:_:environment:input:errors:timeout:)``), and how its tests and benchmarks run the executables, to their
/// end (`runProgram`) or beside them (``start(_:_:environment:directory:input:output:errors:)``: a server, a watch, a
/// run on a terminal).
///
/// Not `Foundation.Process`: on Linux its `run()` lists `/proc/self/fd` by copying each entry's whole 256-byte name
/// field, which reads past the end of glibc's directory buffer and crashes the process when the next page is not
/// mapped (swift-corelibs-foundation pull request 5472, not in this toolchain). This lists the descriptors through
/// `FileManager`, which reads names by their length, and closes them in the child as `Process` does. The child
/// starts with no blocked signal and every signal at its default.
package enum Subprocess {
    /// What the child reads on its standard input.
    package enum Input {
        /// `/dev/null`.
        case nothing
        /// The file at this path.
        case file(String)
        /// These bytes (through an unlinked temporary file, so that a large input never waits for a reader).
        case bytes([UInt8])
    }

    /// Where the child's standard error goes.
    package enum ErrorOutput {
        /// Read, into ``Result/errors``.
        case captured
        /// To this process's standard error, as the child prints it.
        case inherited
    }

    /// How the child ended, and what it printed.
    package struct Result: Sendable {
        /// The exit status, or the number of the signal that ended it (``killed``).
        package var status: Int32
        /// Whether a signal ended the child (its ``status`` is the signal's number).
        package var killed: Bool
        /// Its standard output.
        package var output: [UInt8]
        /// Its standard error, when captured.
        package var errors: [UInt8]
    }

    /// Why a child could not be started.
    package struct StartFailure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Runs `path` with `arguments` and `environment` (this process's when `nil`), blocking the calling thread until
    /// it ends; a child still running after `timeout` is killed (SIGKILL).
    package static func run(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil, input: Input = .nothing,
        errors errorOutput: ErrorOutput = .captured, timeout: Duration? = nil
    ) throws(StartFailure) -> Result {
        let standardInput = try openInput(input)
        defer { close(standardInput) }
        let output = try socketPair()
        let errors: (parent: Int32, child: Int32)?
        do {
            errors = errorOutput == .captured ? try socketPair() : nil
        } catch {
            close(output.parent)
            close(output.child)
            throw error
        }
        let pid: pid_t
        do {
            defer {
                close(output.child)
                if let errors { close(errors.child) }
            }
            pid = try spawn(
                path, arguments, environment: environment, streams: [standardInput, output.child, errors?.child])
        } catch {
            close(output.parent)
            if let errors { close(errors.parent) }
            throw error
        }
        let (printed, errorsPrinted) = readBoth(
            output.parent, errors?.parent, killing: pid, at: timeout.map { ContinuousClock.now + $0 })
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let ended = Termination(waitStatus: status, usage: usage)
        return Result(status: ended.status, killed: ended.killed, output: printed, errors: errorsPrinted)
    }

    /// Starts the child in `directory` (this process's when `nil`), its standard streams copies of the given
    /// descriptors (this process's own where `nil`), every other descriptor closed. The caller closes its copies.
    static func spawn(
        _ path: String, _ arguments: [String], environment: [String: String]?, directory: String? = nil,
        streams: [Int32?]
    ) throws(StartFailure) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, source) in streams.enumerated() {
            if let source { posix_spawn_file_actions_adddup2(&actions, source, Int32(target)) }
        }
        for descriptor in openDescriptors() where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        if let directory {
            let changed = tablesync_spawn_add_chdir(&actions, directory)
            guard changed == 0 else {
                throw StartFailure(description: "could not start \(path) in \(directory): \(errorText(changed))")
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp = variables.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw StartFailure(description: "could not start \(path): \(errorText(spawned))") }
        return pid
    }

    /// The C library's words for error number `number`.
    static func errorText(_ number: Int32) -> String { String(cString: strerror(number)) }

    /// A descriptor for the child's standard input, closed on `exec` here (the child gets its copy).
    static func openInput(_ input: Input) throws(StartFailure) -> Int32 {
        switch input {
        case .nothing: return try openReading("/dev/null")
        case .file(let path): return try openReading(path)
        case .bytes(let bytes):
            var template = Array((FileManager.default.temporaryDirectory.path + "/tablesync-input-XXXXXX").utf8CString)
            let descriptor = template.withUnsafeMutableBufferPointer { name in
                name.baseAddress.map { mkstemp($0) } ?? -1
            }
            guard descriptor >= 0 else { throw StartFailure(description: "no temporary file for a child's input") }
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            _ = template.withUnsafeBufferPointer { name in name.baseAddress.map { unlink($0) } }
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 || (count < 0 && errno == EINTR) else {
                    close(descriptor)
                    throw StartFailure(description: "could not write a child's input: \(errorText(errno))")
                }
                written += max(0, count)
            }
            lseek(descriptor, 0, SEEK_SET)
            return descriptor
        }
    }

    private static func openReading(_ path: String) throws(StartFailure) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw StartFailure(description: "could not open \(path): \(errorText(errno))")
        }
        return descriptor
    }

    /// A connected pair of sockets, both closed on `exec`: the child's end is duplicated onto its standard output
    /// or error.
    static func socketPair() throws(StartFailure) -> (parent: Int32, child: Int32) {
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw StartFailure(description: "socketpair: \(errorText(errno))")
        }
        return (ends[0], ends[1])
    }

    /// This process's open descriptors.
    private static func openDescriptors() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
    }

    /// Everything `output` and `errors` give until their ends, read as it comes from either (a child that fills one
    /// while the other is read never stops), on the calling thread alone; closes them. At `deadline` the child is
    /// killed (SIGKILL) and what it printed so far is kept, without waiting for ends that a grandchild may hold open.
    private static func readBoth(
        _ output: Int32, _ errors: Int32?, killing child: pid_t, at deadline: ContinuousClock.Instant?
    ) -> (output: [UInt8], errors: [UInt8]) {
        var streams = [ReadStream(descriptor: output)] + (errors.map { [ReadStream(descriptor: $0)] } ?? [])
        defer { for stream in streams { close(stream.descriptor) } }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var killed = false
        while streams.contains(where: { !$0.ended }) {
            var waitFor = streams.filter { !$0.ended }.map {
                pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0)
            }
            let timeout = killed ? 0 : deadline.map { Self.milliseconds(until: $0) } ?? -1
            let ready = poll(&waitFor, nfds_t(waitFor.count), timeout)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 {
                // Past the deadline with nothing more to read now (or poll failed): the child ends here.
                if killed || ready < 0 { break }
                _ = kill(child, SIGKILL)
                killed = true
                continue
            }
            for index in streams.indices where !streams[index].ended {
                guard let polled = waitFor.first(where: { $0.fd == streams[index].descriptor }), polled.revents != 0
                else { continue }
                let count = chunk.withUnsafeMutableBytes { read(streams[index].descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    streams[index].bytes.append(contentsOf: chunk[0..<count])
                } else if count == 0 || errno != EINTR {
                    streams[index].ended = true
                }
            }
        }
        return (streams[0].bytes, streams.count > 1 ? streams[1].bytes : [])
    }

    /// Milliseconds from now to `deadline` for `poll`, at least 0, rounded up so that a wait never ends early.
    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = deadline - ContinuousClock.now
        guard left > .zero else { return 0 }
        return Int32(min(Double(Int32.max), (left / .milliseconds(1)).rounded(.up)))
    }
}

/// One of a child's outputs as ``Subprocess`` reads it.
private struct ReadStream {
    let descriptor: Int32
    var bytes: [UInt8] = []
    var ended = false
}
