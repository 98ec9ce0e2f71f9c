import Foundation
import SyncProtocol
import TableSyncStorage

/// The ids of operations the server has applied (``PendingOperation/operationID``), so that an operation git brings
/// back into a journal (a merge or cherry-pick of an older commit, a restore, a reset) is dropped instead of sent
/// again.
///
/// Two records are kept:
/// - `sent.jsonl` in the store, committed and joined by git's union merge: one line per operation that was in the
///   journal of `HEAD` when it was sent (only those can come back through git into another clone). Lines older
///   than ``retention`` are dropped when the file is next written.
/// - `.tablesync/sent` in the machine-local cache: the id of every operation this clone sent, for a restore or reset
///   of this clone's own files (which takes `sent.jsonl` back too). It keeps the last ``localLimit`` ids.
enum Acknowledgements {
    /// How long a committed acknowledgement is kept: a branch older than this that still holds operations sent
    /// since would have them sent again (and the lost-acknowledgement rule or a conflict catches them).
    static let retention: TimeInterval = 90 * 24 * 3600
    /// How many ids the machine-local log keeps.
    static let localLimit = 100_000

    /// Every acknowledged id, from both records. Lines that do not parse (git's conflict markers, if the union
    /// merge was not set up) are skipped: an acknowledgement only ever drops an operation.
    static func load(layout: StoreLayout) -> Set<String> {
        var ids = Set<String>()
        for line in localLog(layout).lines() where !line.isEmpty {
            ids.insert(String(decoding: line, as: UTF8.self))
        }
        for entry in committedLines(layout: layout) {
            if let id = entry.value["opid"]?.stringValue { ids.insert(id) }
        }
        return ids
    }

    /// Records that the server applied `operations`; those whose id is in `committed` (the operations of the
    /// journal in `HEAD`) also go into `sent.jsonl`.
    static func record(
        _ operations: [PendingOperation], committed: Set<String>, layout: StoreLayout, now: Date = Date()
    ) throws {
        let identified = operations.compactMap { operation in
            operation.operationID.map { (operation: operation, id: $0) }
        }
        guard !identified.isEmpty else { return }
        try localLog(layout).append(identified.map(\.id), temporaryDirectory: layout.temporaryDirectory)
        let travelled = identified.filter { committed.contains($0.id) }
        guard !travelled.isEmpty else { return }
        let nowTicks = Int64(now.timeIntervalSince1970 * Double(Timestamp.ticksPerSecond))
        let stamp = Timestamp(ticks: nowTicks).description
        var added: [UInt8] = []
        for (operation, id) in travelled {
            let line: JSONValue = [
                "opid": .string(id), "op": .string(operation.kind.rawValue), "table": .string(operation.table),
                "id": .string(operation.id), "sent": .string(stamp)
            ]
            CanonicalJSON.append(line, style: .compact, to: &added)
            added.append(UInt8(ascii: "\n"))
        }
        let cutoff = nowTicks - Int64(retention) * Timestamp.ticksPerSecond
        let existing = committedLines(layout: layout)
        if existing.contains(where: { $0.sent.map { $0 < cutoff } ?? false }) {
            var kept: [UInt8] = []
            for entry in existing where !(entry.sent.map { $0 < cutoff } ?? false) {
                kept += entry.bytes + [UInt8(ascii: "\n")]
            }
            var batch = DurableFileBatch()
            batch.write(kept + added, to: layout.acknowledgementsFile)
            try batch.commit(temporaryDirectory: layout.temporaryDirectory)
        } else {
            try FileSystem.appendAndSync(layout.acknowledgementsFile, added)
        }
    }

    /// The lines of `sent.jsonl` that parse, with their bytes and time.
    private static func committedLines(layout: StoreLayout) -> [(bytes: [UInt8], value: JSONValue, sent: Int64?)] {
        guard let bytes = try? FileSystem.readFile(layout.acknowledgementsFile) else { return [] }
        return bytes.split(separator: UInt8(ascii: "\n")).compactMap { line in
            guard let value = try? JSONParser.parse(Array(line)), value["opid"]?.stringValue != nil else { return nil }
            return (Array(line), value, value["sent"]?.stringValue.flatMap(Timestamp.init(parsing:))?.ticks)
        }
    }

    /// The machine-local log, whose lines (an id and its end) take 17 bytes.
    private static func localLog(_ layout: StoreLayout) -> TrimmedLog {
        TrimmedLog(path: layout.localAcknowledgementsFile, limit: localLimit, minimumLineBytes: 17)
    }
}
