import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion with `posix_spawn` and reads its output, for ``runProgram(_:_:environment:input:)``.
///
/// Not `Foundation.Process`: on Linux its `run()` lists `/proc/self/fd` by copying each entry's whole 256-byte name
/// field, which reads past the end of glibc's directory buffer and crashes the process when the next page is not
/// mapped (swift-corelibs-foundation pull request 5472, not in this toolchain). A test process with many open
/// descriptors launching programs from many threads met it. This lists the descriptors through `FileManager`,
/// which reads names by their length, and closes them in the child as `Process` does.
enum SpawnedProgram {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `path` with `arguments` and `environment` (this process's when `nil`), standard input from the file
    /// `input` (or `/dev/null`), and returns its exit status (the signal's number when `killed`) and output.
    static func run(
        _ path: String, _ arguments: [String], environment: [String: String]?, input: String?
    ) throws -> (status: Int32, stdout: Data, stderr: Data, killed: Bool) {
        let output = try socketPair()
        let errors = try socketPair()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output.child, 1)
        posix_spawn_file_actions_adddup2(&actions, errors.child, 2)
        for descriptor in openDescriptors() where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
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
        close(output.child)
        close(errors.child)
        guard spawned == 0 else {
            close(output.parent)
            close(errors.parent)
            throw Failure(description: "could not start \(path): \(String(cString: strerror(spawned)))")
        }
        // Both are read at once, so that a child filling one while the other is read never stops.
        let stderr = ReadResult()
        let stderrRead = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            stderr.data = readAll(errors.parent)
            stderrRead.signal()
        }
        let stdout = readAll(output.parent)
        stderrRead.wait()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0
            ? ((status >> 8) & 0xff, stdout, stderr.data, false) : (signal, stdout, stderr.data, true)
    }

    /// A connected pair of sockets, both closed on `exec`: the child's end is duplicated onto its standard output
    /// or error.
    private static func socketPair() throws -> (parent: Int32, child: Int32) {
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw Failure(description: "socketpair: \(String(cString: strerror(errno)))")
        }
        return (ends[0], ends[1])
    }

    /// This process's open descriptors.
    private static func openDescriptors() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
    }

    /// Everything `descriptor` gives until its end; closes it.
    private static func readAll(_ descriptor: Int32) -> Data {
        defer { close(descriptor) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: chunk[0..<count])
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return data
            }
        }
    }
}

/// What one thread read, handed to another after a semaphore's signal (which orders the two).
private final class ReadResult: @unchecked Sendable {
    var data = Data()
}
