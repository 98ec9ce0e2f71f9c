import TableSyncStorage

/// A machine-local file of lines that only grows by appends and keeps its newest lines: the acknowledgements of
/// operations sent (``Acknowledgements``) and the record files the server applied (``AppliedFiles``).
struct TrimmedLog {
    /// The file.
    let path: String
    /// How many lines it keeps: the newest half once it holds more.
    let limit: Int
    /// The fewest bytes a line takes with its end, so that the file is read only once it may hold more than `limit`.
    let minimumLineBytes: Int

    /// The lines, without their ends; none when there is no file.
    func lines() -> [[UInt8]] {
        guard let bytes = try? FileSystem.readFile(path) else { return [] }
        return bytes.split(separator: UInt8(ascii: "\n")).map(Array.init)
    }

    /// Appends `lines` durably, then trims the file when it holds more than ``limit`` lines.
    func append(_ lines: [String], temporaryDirectory: String) throws {
        guard !lines.isEmpty else { return }
        try FileSystem.appendAndSync(path, Array(lines.map { $0 + "\n" }.joined().utf8))
        guard let size = (try? FileSystem.status(path))??.size, size > Int64(limit * minimumLineBytes) else { return }
        let all = self.lines()
        guard all.count > limit else { return }
        var kept: [UInt8] = []
        for line in all.suffix(limit / 2) { kept += line + [UInt8(ascii: "\n")] }
        var batch = DurableFileBatch()
        batch.write(kept, to: path)
        // A trim that fails leaves the longer file, which the next append trims again.
        _ = try? batch.commit(temporaryDirectory: temporaryDirectory)
    }
}
