#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A git work tree that the benchmarks commit and time `git status` in.
///
/// Every command runs without automatic `git gc` or maintenance: after the commit of a large tree they repack in the
/// background for minutes, on the cores the later benchmarks are timed on.
struct GitWorkTree {
    let directory: String

    /// Runs `git` in the work tree, reading `standardInput` (a file's path).
    @discardableResult
    func run(_ arguments: [String], standardInput: String = "/dev/null") throws -> ChildRun {
        try ChildProcess.run(
            "/usr/bin/env", ["git", "-C", directory, "-c", "gc.auto=0", "-c", "maintenance.auto=false"] + arguments,
            standardInput: standardInput)
    }

    /// Makes the work tree a repository whose first commit holds every file that `git add -A` would add, and an
    /// index that matches it: the tree and commit `git add -A && git commit` would make.
    ///
    /// The file contents go into one pack (`git fast-import`), not one loose object each as `git add` writes them:
    /// at 1,000,000 record files `git add` wrote about 4 GB of loose objects and took 13 minutes here, a third of
    /// `make bench-scale`, and left them in the page cache beside the stores the later benchmarks read. The index
    /// starts without the files' `stat` data, as after a clone: the first `git status` takes it from the files
    /// (hashing each once) and writes it, so the benchmark warms up with one status before timing any.
    /// `scratch` holds the intermediate files (the import stream, its marks, the index entries) until it returns.
    func commitEverything(message: String, identity: [String], scratch: String) throws {
        try run(["init", "-q"])
        let listed = try run(["ls-files", "-z", "--others", "--exclude-standard"]).standardOutput
        let paths = listed.split(separator: "\0").map(String.init)
        guard !paths.isEmpty else {
            throw BenchError(what: "git commit", detail: "\(directory) holds no file to commit")
        }
        let stream = scratch + "/git-blobs.fast-import"
        let marks = scratch + "/git-blobs.marks"
        let entries = scratch + "/git-index-info"
        defer { for path in [stream, marks, entries] { unlink(path) } }

        var modes: [String] = []
        modes.reserveCapacity(paths.count)
        let blobs = try AppendingFile(creating: stream)
        for (number, path) in paths.enumerated() {
            var info = stat()
            guard lstat(directory + "/" + path, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                let contents = FileManager.default.contents(atPath: directory + "/" + path)
            else {
                throw BenchError(what: "git commit", detail: "\(path) is not a regular file that can be read")
            }
            modes.append(info.st_mode & S_IXUSR != 0 ? "100755" : "100644")
            try blobs.append("blob\nmark :\(number + 1)\ndata \(contents.count)\n".utf8)
            try blobs.append(contents)
            try blobs.append(CollectionOfOne(UInt8(ascii: "\n")))
        }
        try blobs.finish()
        try run(["fast-import", "--quiet", "--export-marks=" + marks], standardInput: stream)

        // Each line of the marks file is ":<number> <object id>".
        var objectIDs = [Substring](repeating: "", count: paths.count)
        let markLines = try String(contentsOfFile: marks, encoding: .utf8)
        for line in markLines.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let number = Int(fields[0].dropFirst()), (1...paths.count).contains(number) else {
                throw BenchError(what: "git fast-import", detail: "unexpected line in its marks: \(line)")
            }
            objectIDs[number - 1] = fields[1]
        }
        let index = try AppendingFile(creating: entries)
        for (position, path) in paths.enumerated() {
            guard !objectIDs[position].isEmpty else {
                throw BenchError(what: "git fast-import", detail: "no object for \(path)")
            }
            try index.append("\(modes[position]) \(objectIDs[position])\t\(path)\0".utf8)
        }
        try index.finish()
        try run(["update-index", "-z", "--index-info"], standardInput: entries)
        let tree = try run(["write-tree"]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let commit = try run(identity + ["commit-tree", tree, "-m", message]).standardOutput.trimmingCharacters(
            in: .whitespacesAndNewlines)
        try run(["update-ref", "HEAD", commit])
    }
}

/// A file written front to back through a buffer of a few megabytes; closed when finished or dropped.
private final class AppendingFile {
    private var descriptor: Int32
    private let path: String
    private var buffer: [UInt8] = []

    init(creating path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BenchError(what: "open", detail: "\(path): errno \(errno)") }
        self.path = path
        buffer.reserveCapacity(Self.bufferSize)
    }

    private static let bufferSize = 4 << 20

    func append<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws {
        buffer += bytes
        if buffer.count >= Self.bufferSize { try flush() }
    }

    private func flush() throws {
        var written = 0
        while written < buffer.count {
            let count = buffer.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            guard count > 0 else { throw BenchError(what: "write", detail: "\(path): errno \(errno)") }
            written += count
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes out what is buffered and closes the file.
    func finish() throws {
        try flush()
        let closed = close(descriptor)
        descriptor = -1
        guard closed == 0 else { throw BenchError(what: "close", detail: "\(path): errno \(errno)") }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }
}
