#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import Foundation
import TableSync

/// Another program keeping the disk busy (P9): a child process (`tablesync-bench dirty-writer`) that rewrites a
/// region of a file in 1 MiB blocks as fast as the page cache takes them and never syncs, as a database checkpoint,
/// a build or a copy does, so the machine holds hundreds of megabytes unwritten on the store's file system.
struct BusyDisk {
    let writer: Subprocess.Child
    let file: String

    /// Starts the writer on `file` (`megabytes` of it, rewritten in a loop) for at most `seconds`.
    static func start(benchExecutable: String, file: String, megabytes: Int, seconds: Int) throws -> BusyDisk {
        let writer = try ChildProcess.start(
            benchExecutable,
            [
                "dirty-writer", "--file", file, "--megabytes", String(megabytes),
                "--seconds", String(seconds)
            ])
        return BusyDisk(writer: writer, file: file)
    }

    /// Waits until the machine holds at least `bytes` unwritten (or `seconds` pass); returns what it holds then.
    func waitForUnwritten(atLeast bytes: Int, seconds: Double) -> Int {
        let deadline = Clock.now() + seconds
        var unwritten = SystemMemory.unwrittenBytes() ?? 0
        while unwritten < bytes && Clock.now() < deadline {
            usleep(20_000)
            unwritten = SystemMemory.unwrittenBytes() ?? 0
        }
        return unwritten
    }

    /// Stops the writer, then writes its data out so the next quiet measurement is quiet again.
    func stop() {
        writer.send(SIGKILL)
        _ = writer.waitUntilExit()
        sync()
    }
}

/// `tablesync-bench dirty-writer`: the busy neighbour of ``BusyDisk``.
struct DirtyWriterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dirty-writer",
        abstract: "Rewrite MEGABYTES of FILE in 1 MiB blocks for SECONDS without ever syncing.",
        shouldDisplay: false
    )

    @Option(help: "The file to write.") var file: String
    @Option(help: "How much of it to rewrite in a loop.") var megabytes = 4096
    @Option(help: "When to stop at the latest.") var seconds = 300

    func run() throws {
        let descriptor = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw BenchError(what: "dirty-writer", detail: "cannot open \(file): errno \(errno)")
        }
        defer { close(descriptor) }
        let block = [UInt8](repeating: 0x5A, count: 1 << 20)
        let end = Clock.now() + Double(seconds)
        var index = 0
        while Clock.now() < end {
            let offset = off_t(index % max(1, megabytes)) << 20
            let written = block.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, offset) }
            guard written == block.count else {
                throw BenchError(what: "dirty-writer", detail: "write to \(file): errno \(errno)")
            }
            index += 1
        }
    }
}

/// `files` new files made durable the two ways a ``DurableFileBatch`` can (P9): one `syncfs`, or an `fsync` each;
/// then one `fsync` of their directory. Returns the seconds from the first write to the last sync.
enum DurableBatchProbe {
    enum Way: String, CaseIterable {
        case syncfs
        case fsyncEach = "fsync each"
    }

    static func run(directory: String, files: Int, way: Way) throws -> Double {
        try makeDirectory(directory)
        let bytes = [UInt8](repeating: 0x7B, count: 400)
        let start = Clock.now()
        var paths: [String] = []
        for index in 0..<files {
            let path = "\(directory)/\(way == .syncfs ? "a" : "b")-\(index)-\(UInt32.random(in: 0...UInt32.max)).json"
            try writeNewFile(path, bytes)
            paths.append(path)
        }
        switch way {
        case .syncfs: try syncFileSystem(containing: directory)
        case .fsyncEach: for path in paths { try syncPath(path) }
        }
        try syncPath(directory)
        return Clock.now() - start
    }
}
