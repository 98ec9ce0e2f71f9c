import Foundation
import SyncProtocol
import TableSync

/// A fresh directory under the system's temporary directory, removed when the test ends.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init() {
        path = NSTemporaryDirectory() + "tablesync-test-" + UUID().uuidString.lowercased()
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func file(_ relative: String) -> String { path + "/" + relative }

    public func write(_ relative: String, _ text: String) throws {
        let full = file(relative)
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: full))
    }

    public func read(_ relative: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: file(relative))), as: UTF8.self)
    }

    public func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: file(relative)) }
}

/// A deterministic random generator (SplitMix64), so randomised tests repeat exactly.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The path of a product built next to the test bundle (`tablesync`, `tablesync-server`).
public func builtProduct(_ name: String) -> String {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while directory.path != "/" {
        let candidate = directory.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    return name
}

/// Runs a program to completion and returns its exit status (the signal's number when `killed`), its output, and
/// whether a signal ended it; a program still running after `timeout` is killed (SIGKILL). The wait happens on a
/// thread of its own, off the cooperative pool, which the servers that tests run in this process need.
@discardableResult
public func runProgram(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil,
    input: String? = nil, timeout: Duration? = nil
) async throws -> (status: Int32, stdout: String, stderr: String, killed: Bool) {
    try await runOnThreadOfItsOwn {
        let run = try Subprocess.run(
            path, arguments, environment: environment, input: input.map { .file($0) } ?? .nothing, timeout: timeout)
        return (
            run.status, String(decoding: run.output, as: UTF8.self), String(decoding: run.errors, as: UTF8.self),
            run.killed
        )
    }
}
