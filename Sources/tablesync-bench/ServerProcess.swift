#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TableSync

/// `tablesync-server` on a free loopback port, as a child process for the length of the benchmarks.
final class ServerProcess {
    let port: UInt16
    private let child: Subprocess.Child

    var pid: pid_t { child.processIdentifier }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Starts the server on `database` (its `--database` value: `sqlite:PATH` or a `postgres://` URL) serving
    /// `tables`, with `options` (more flags) and waits until it accepts connections.
    init(executable: String, database: String, tables: [String], logFile: String, options: [String] = []) throws {
        port = try Loopback.freePort()
        var arguments =
            ["--host", "127.0.0.1", "--port", String(port), "--database", database, "--log-level", "warning"] + options
        for table in tables { arguments += ["--table", table + ":maxTop=1000"] }
        child = try ChildProcess.start(executable, arguments, output: .file(logFile), errors: .standardOutput)
        let deadline = Clock.now() + 30
        while !Loopback.accepts(port: port) {
            guard child.isRunning else { throw BenchError(what: executable, detail: "exited at start; see \(logFile)") }
            guard Clock.now() < deadline else {
                throw BenchError(what: executable, detail: "not listening after 30 s; see \(logFile)")
            }
            usleep(50_000)
        }
    }

    /// Stops the server gracefully (SIGTERM) and waits for it; once (a later call does nothing).
    func stop() {
        child.terminate()
        _ = child.waitUntilExit()
    }
}

/// Loopback sockets: a free port, and whether something listens on one.
enum Loopback {
    static func freePort() throws -> UInt16 {
        let socket = try openSocket()
        defer { close(socket) }
        var address = loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw BenchError(what: "bind", detail: "errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    static func accepts(port: UInt16) -> Bool {
        guard let socket = try? openSocket() else { return false }
        defer { close(socket) }
        return connect(socket, port: port)
    }

    static func openSocket() throws -> Int32 {
        #if canImport(Glibc)
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard socket >= 0 else { throw BenchError(what: "socket", detail: "errno \(errno)") }
        return socket
    }

    static func connect(_ socket: Int32, port: UInt16) -> Bool {
        var address = loopbackAddress(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                #else
                Darwin.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                #endif
            }
        }
    }

    static func loopbackAddress(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
