import SyncProtocol
import TableSyncStorage

/// The record files whose content the server applied, for the records this clone pushed, by the content hash of the
/// bytes sent (`.tablesync/applied-files`, machine-local). A file that holds such bytes again on an older version, or
/// on none (a reset, a restore, a switch put back what was sent long ago), repeats what the server has seen: history,
/// brought up to date, never an edit sent over newer data nor a conflict with it (``AdoptionRule``).
///
/// One line per applied insert or update, `<table>\t<id>\t<digest>`; the newest ``limit`` lines are kept. Bytes,
/// not content, are compared: git puts back the very bytes it committed, and a file that differs by a space is
/// compared with the server as before.
struct AppliedFiles: Sendable {
    /// How many lines the file keeps.
    static let limit = 100_000

    private var lines: Set<String> = []

    /// The files recorded in `layout`'s cache; none when there is none (a fresh clone, a lost cache).
    static func load(layout: StoreLayout) -> AppliedFiles {
        var files = AppliedFiles()
        for line in log(layout).lines() where !line.isEmpty {
            files.lines.insert(String(decoding: line, as: UTF8.self))
        }
        return files
    }

    /// Whether the server applied the file whose bytes hash to `hash` (``ContentHash``) for the record `key`.
    func contains(hash: String, for key: RecordKey) -> Bool {
        lines.contains(Self.line(key, hash))
    }

    /// Appends, durably, the hashes of the files whose content the server applied, by record.
    static func record(_ hashes: [RecordKey: String], layout: StoreLayout) throws {
        try log(layout).append(
            hashes.sorted { $0.key < $1.key }.map { line($0.key, $0.value) },
            temporaryDirectory: layout.temporaryDirectory)
    }

    private static func line(_ key: RecordKey, _ hash: String) -> String { "\(key.table)\t\(key.id)\t\(hash)" }

    /// The file, whose lines take at least 68 bytes (a table, an id, a 64-digit hash, separators and the line end).
    private static func log(_ layout: StoreLayout) -> TrimmedLog {
        TrimmedLog(path: layout.appliedFilesFile, limit: limit, minimumLineBytes: 68)
    }
}
