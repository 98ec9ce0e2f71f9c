import Foundation
import TableSync
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `tablesync` with its standard error on a pseudo-terminal, as a person at a terminal sees it (progress
/// rewritten in place), and its standard output on a pipe.
enum TerminalRun {
    /// What one run printed: `terminal` is every byte written on the terminal, control sequences included (the
    /// terminal's line discipline turns `\n` into `\r\n`).
    struct Output {
        var status: Int32
        var stdout: String
        var terminal: String
    }

    /// Runs `tablesync ARGUMENTS` to completion, off the cooperative pool.
    static func run(_ arguments: [String]) async throws -> Output {
        try await runOnThreadOfItsOwn { try runBlocking(arguments) }
    }

    private static func runBlocking(_ arguments: [String]) throws -> Output {
        let (controller, terminalSide) = try openPseudoTerminal()
        defer { close(controller) }
        let process: Subprocess.Child
        do {
            defer { close(terminalSide) }
            process = try Subprocess.start(
                CLI.path, arguments, environment: CLI.environment, output: .pipe,
                errors: .descriptor(terminalSide))
        }
        // Only the child holds the terminal side now: reading ends (EIO) once it exits.

        let collected = TerminalBytes()
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(controller, &buffer, buffer.count)
                if count <= 0 { break }
                collected.append(buffer[0..<count])
            }
            collected.finish()
        }
        reader.start()
        let stdout = process.standardOutput?.readDataToEndOfFile() ?? Data()
        let ended = process.waitUntilExit()
        return Output(
            status: ended.status, stdout: String(decoding: stdout, as: UTF8.self),
            terminal: String(decoding: collected.waitForEnd(), as: UTF8.self))
    }
}

extension TerminalRun {
    /// A new pseudo-terminal: the controlling side (what a terminal emulator reads) and the terminal side, open.
    private static func openPseudoTerminal() throws -> (controller: Int32, terminal: Int32) {
        let controller = PseudoTerminalCalls.posixOpenpt(O_RDWR | O_NOCTTY)
        guard controller >= 0 else {
            throw PseudoTerminalError(description: "posix_openpt: \(String(cString: strerror(errno)))")
        }
        var name = [CChar](repeating: 0, count: 256)
        guard PseudoTerminalCalls.grantpt(controller) == 0, PseudoTerminalCalls.unlockpt(controller) == 0,
            PseudoTerminalCalls.ptsnameR(controller, &name, name.count) == 0
        else {
            close(controller)
            throw PseudoTerminalError(description: "no pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let terminal = open(path, O_RDWR | O_NOCTTY)
        guard terminal >= 0 else {
            close(controller)
            throw PseudoTerminalError(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        return (controller, terminal)
    }
}

/// The C library's pseudo-terminal calls. Glibc's Swift module leaves them out (its headers declare them only for
/// `_XOPEN_SOURCE`), so on Linux they are looked up by name, with C's calling convention.
private enum PseudoTerminalCalls {
    #if canImport(Glibc)
    static let posixOpenpt = symbol("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)
    static let grantpt = symbol("grantpt", as: (@convention(c) (Int32) -> Int32).self)
    static let unlockpt = symbol("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
    static let ptsnameR = symbol(
        "ptsname_r", as: (@convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32).self)

    private static func symbol<Function>(_ name: String, as type: Function.Type) -> Function {
        guard let address = dlsym(nil, name) else { fatalError("the C library has no \(name)") }
        return unsafeBitCast(address, to: type)
    }
    #else
    static let posixOpenpt = Darwin.posix_openpt
    static let grantpt = Darwin.grantpt
    static let unlockpt = Darwin.unlockpt
    static func ptsnameR(_ controller: Int32, _ buffer: UnsafeMutablePointer<CChar>, _ count: Int) -> Int32 {
        Darwin.ptsname_r(controller, buffer, count)
    }
    #endif
}

/// A pseudo-terminal could not be had.
private struct PseudoTerminalError: Error, CustomStringConvertible {
    var description: String
}

/// Bytes read from the terminal on the reader thread, handed over when it ends.
private final class TerminalBytes: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var bytes: [UInt8] = []
    private var ended = false

    func append(_ more: ArraySlice<UInt8>) {
        condition.withLock { bytes += more }
    }

    func finish() {
        condition.withLock {
            ended = true
            condition.broadcast()
        }
    }

    func waitForEnd() -> [UInt8] {
        condition.withLock {
            while !ended { condition.wait() }
            return bytes
        }
    }
}
