import Foundation
import SyncProtocol
import TableSyncStorage

/// The queue of pending operations (`journal.jsonl`), collapsed per record as ``OperationCollapse`` says.
///
/// Changes are made in memory with ``enqueue(_:table:id:baseVersion:item:)`` and ``remove(sequences:)`` and
/// written with ``save(layout:deferringRewrite:)``: new operations are appended and synced (a single `write` +
/// `fsync`), and the file is rewritten atomically when an existing line changes or goes.
///
/// A push removes operations after every batch; rewriting the whole file each time would write O(n²) bytes for n
/// operations. So a push saves with `deferringRewrite`: the removed lines are appended to the machine-local
/// settled log (`.tablesync/settled.jsonl`) instead, and the push ends with an exact save, which rewrites the
/// journal once and deletes the log. Loading takes every settled line out of the journal (each removes one
/// identical line, so lines that git brought in from elsewhere are matched whole, never by sequence number
/// alone), so a run killed mid-push still sees exactly what is pending, and the next read-write open rewrites
/// the file. Loading also folds repeated operations on one record in sequence order, so a journal joined by
/// git's union merge still reads as one queue.
struct Journal: Sendable {
    /// The pending operations in push order, which is increasing sequence order.
    private(set) var operations: [PendingOperation]
    /// The line of each operation in `journal.jsonl`, encoded once: a rewrite after a push's batch copies the
    /// remaining lines instead of encoding them again.
    private var lines: [[UInt8]]
    private var sequenceByKey: [RecordKey: Int64]
    /// How many of the first ``operations`` are in `journal.jsonl` (the later ones were appended in memory only).
    private var persistedCount: Int
    /// Lines of `journal.jsonl` whose operations were removed, not yet recorded anywhere on disk.
    private var unsavedSettledLines: [[UInt8]] = []
    /// Whether the settled log exists, so that `journal.jsonl` holds lines that are no longer pending.
    private var hasSettledLog = false
    private var needsRewrite = false
    private var nextSequence: Int64
    /// The clone new operations come from (``PendingOperation/origin``); `nil` outside git.
    var origin: String?

    /// An empty journal whose sequence numbers start after `lastSequence`.
    init(lastSequence: Int64 = 0) {
        self.init(operations: [], lines: [], lastSequence: lastSequence)
    }

    /// A journal of `operations` (in increasing sequence order, one per record) read from `lines`.
    private init(operations: [PendingOperation], lines: [[UInt8]], lastSequence: Int64) {
        self.operations = operations
        self.lines = lines
        self.sequenceByKey = Dictionary(uniqueKeysWithValues: operations.map { ($0.key, $0.sequence) })
        self.persistedCount = operations.count
        self.nextSequence = max(lastSequence, operations.last?.sequence ?? 0) + 1
    }

    /// The pending operation on `key`, if any.
    func pending(_ key: RecordKey) -> PendingOperation? {
        sequenceByKey[key].flatMap(position(of:)).map { operations[$0] }
    }

    /// Where the operation with `sequence` is in ``operations`` (sorted by sequence).
    private func position(of sequence: Int64) -> Int? {
        let found = partitionPoint(operations.count) { operations[$0].sequence < sequence }
        return found < operations.count && operations[found].sequence == sequence ? found : nil
    }

    /// The pending operations of one table, in push order.
    func operations(inTable table: String) -> [PendingOperation] {
        operations.filter { $0.table == table }
    }

    /// `true` when nothing is pending.
    var isEmpty: Bool { operations.isEmpty }

    /// Records a new local change, collapsing it with the pending operation on the same record. Returns the
    /// operation now pending for the record (`nil` when the change cancelled a pending insert). An operation added
    /// comes from ``origin`` with an id of its own, unless it stands for `existing`, an operation read from a
    /// journal git joined, whose origin and id it keeps. A local change folded into another clone's operation makes
    /// it this clone's.
    @discardableResult
    mutating func enqueue(
        _ kind: PendingOperation.Kind, table: String, id: String, baseVersion: String?,
        item: JSONValue? = nil, existing identity: PendingOperation? = nil
    ) throws -> PendingOperation? {
        let key = RecordKey(table: table, id: id)
        let existing = pending(key)
        func made(baseVersion: String?) -> PendingOperation {
            let origin = identity == nil ? self.origin : identity?.origin
            return PendingOperation(
                sequence: takeSequence(), kind: kind, table: table, id: id,
                baseVersion: kind == .insert ? nil : baseVersion, item: kind == .delete ? item : nil,
                undelete: identity?.undelete ?? false, origin: origin,
                operationID: identity == nil ? origin.map { _ in Self.newOperationID() } : identity?.operationID)
        }
        switch OperationCollapse.outcome(pending: existing?.kind, new: kind) {
        case .add:
            let operation = made(baseVersion: baseVersion)
            append(operation)
            return operation
        case .keepPending:
            // A change made here to a record whose operation another clone queued makes that operation this
            // clone's: it now sends what it holds, or meets the conflict itself, rather than wait for that clone.
            guard identity == nil, let existing, !existing.isSent(by: origin) else { return existing }
            let taken = existing.takenOver(by: origin)
            replace(taken)
            return taken
        case .dropBoth:
            if let existing { remove(sequences: [existing.sequence]) }
            return nil
        case .replacePending:
            if let existing { remove(sequences: [existing.sequence]) }
            let operation = made(baseVersion: existing?.baseVersion)
            append(operation)
            return operation
        case .reject(let reason):
            throw StoreError.operationRejected(table: table, id: id, reason: reason)
        }
    }

    /// A new operation id: 64 random bits in hex.
    static func newOperationID() -> String {
        String(UUID().uuidString.lowercased().filter { $0 != "-" }.prefix(16))
    }

    /// Removes the operations with these sequence numbers (pushed, or settled by a person). A push removes a
    /// batch near the front after each batch, so the scan stops at the last one found and the rest of the
    /// journal moves down in one go (checking every operation each time made a long push quadratic).
    @discardableResult
    mutating func remove(sequences: Set<Int64>) -> [PendingOperation] {
        guard !sequences.isEmpty else { return [] }
        var kept = 0
        var found = 0
        var index = 0
        var persistedRemoved = 0
        var removed: [PendingOperation] = []
        while index < operations.count && found < sequences.count {
            let operation = operations[index]
            if sequences.contains(operation.sequence) {
                sequenceByKey[operation.key] = nil
                found += 1
                removed.append(operation)
                if index < persistedCount {
                    unsavedSettledLines.append(lines[index])
                    persistedRemoved += 1
                }
            } else {
                operations.swapAt(kept, index)
                lines.swapAt(kept, index)
                kept += 1
            }
            index += 1
        }
        guard found > 0 else { return [] }
        // Positions kept..<index hold the removed operations; everything after them stays in order.
        operations.removeSubrange(kept..<index)
        lines.removeSubrange(kept..<index)
        persistedCount -= persistedRemoved
        return removed
    }

    /// Replaces the pending operation that has `operation`'s sequence number (a new base version after a
    /// conflict was settled).
    mutating func replace(_ operation: PendingOperation) {
        guard let index = position(of: operation.sequence) else { return }
        sequenceByKey[operations[index].key] = nil
        operations[index] = operation
        lines[index] = Self.line(operation)
        sequenceByKey[operation.key] = operation.sequence
        needsRewrite = true
    }

    /// Whether `journal.jsonl` differs from ``operations`` in more than operations appended since the last save.
    var needsRewriteOnSave: Bool { needsRewrite || hasSettledLog || !unsavedSettledLines.isEmpty }

    /// Writes what changed since loading or the last save. Without `deferringRewrite`, `journal.jsonl` then
    /// holds exactly ``operations``. With it (between a push's batches), removed lines go to the settled log
    /// rather than making the journal be rewritten; a line that changed still rewrites it.
    mutating func save(layout: StoreLayout, deferringRewrite: Bool = false) throws {
        if needsRewrite || (!deferringRewrite && needsRewriteOnSave) {
            var batch = DurableFileBatch()
            batch.write(Array(lines.joined()), to: layout.journalFile)
            // A rewrite may drop the highest sequence number; keep it so numbers are never reused.
            batch.write(CanonicalJSON.encode(JournalState(nextSequence: nextSequence).json), to: layout.stateFile)
            try batch.commit(temporaryDirectory: layout.temporaryDirectory)
            // Killed before this, the log's lines match nothing the rewritten journal still holds.
            if hasSettledLog { try FileSystem.removeFile(layout.settledFile) }
            hasSettledLog = false
            unsavedSettledLines = []
        } else {
            if !unsavedSettledLines.isEmpty {
                try FileSystem.appendAndSync(layout.settledFile, Array(unsavedSettledLines.joined()))
                if !hasSettledLog { try FileSystem.sync(layout.cacheDirectory) }
                hasSettledLog = true
                unsavedSettledLines = []
            }
            if persistedCount < operations.count {
                try FileSystem.appendAndSync(layout.journalFile, Array(lines[persistedCount...].joined()))
            }
        }
        persistedCount = operations.count
        needsRewrite = false
    }

    /// Reads `journal.jsonl` (absent means empty), leaving out operations whose id is `acknowledged`: sent already,
    /// here or by another clone, and brought back by git.
    static func load(layout: StoreLayout, acknowledged: Set<String> = []) throws -> Journal {
        // The settled log first: a reader racing a push that rewrites the journal and deletes the log then sees
        // the journal at that moment or later, never an old journal without the log that settled its lines.
        let settled = try SettledLines.load(layout: layout)
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(layout.journalFile)
        } catch let error as FileSystemError where error.isNotFound {
            bytes = []
        }
        let parsed = try ParsedFile(bytes, settled: settled, acknowledged: acknowledged)
        // Before a deferred rewrite, only a settled line may hold the highest sequence number.
        let lastSequence = max(JournalState.load(layout: layout).nextSequence - 1, parsed.highestSequence)
        var journal: Journal
        if Self.isCollapsed(parsed.operations) {
            journal = Journal(operations: parsed.operations, lines: parsed.lines, lastSequence: lastSequence)
            journal.needsRewrite = parsed.droppedAcknowledged
        } else {
            journal = try folded(parsed.operations, lastSequence: lastSequence)
        }
        journal.hasSettledLog = settled != nil
        return journal
    }

    /// The lines of `journal.jsonl` as read, before they make a journal: what is still pending, and what the lines
    /// left out tell.
    struct ParsedFile {
        /// The pending operations, in file order.
        var operations: [PendingOperation] = []
        /// The line of each of ``operations``, as this journal writes it.
        var lines: [[UInt8]] = []
        /// The highest sequence number of any line, settled and acknowledged ones included.
        var highestSequence: Int64 = 0
        /// Whether an acknowledged operation was left out, so that the file no longer says what is pending.
        var droppedAcknowledged = false

        /// Parses `bytes`, the lines of `journal.jsonl`: blank lines are skipped, each line of `settled` leaves out
        /// one identical line, and an operation whose id is `acknowledged` is left out. Throws
        /// ``StoreError/invalidJournalLine(file:line:reason:)`` for a line that is not an operation.
        init(_ bytes: [UInt8], settled: SettledLines?, acknowledged: Set<String>) throws {
            var settled = settled
            let file = StoreLayout.journalFileName
            var lineNumber = 0
            for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                lineNumber += 1
                if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") })
                {
                    continue
                }
                do {
                    let operation = try PendingOperation(json: try JSONParser.parse(Array(line)))
                    // The line as this journal writes it, so an edited line is written back canonical.
                    let canonical = Journal.line(operation)
                    highestSequence = max(highestSequence, operation.sequence)
                    if settled?.take(canonical) == true { continue }
                    if let operationID = operation.operationID, acknowledged.contains(operationID) {
                        droppedAcknowledged = true
                        continue
                    }
                    operations.append(operation)
                    lines.append(canonical)
                } catch let error as JSONParseError {
                    throw StoreError.invalidJournalLine(
                        file: file, line: lineNumber, reason: "column \(error.column): \(error.reason)")
                } catch let error as OperationFormatError {
                    throw StoreError.invalidJournalLine(file: file, line: lineNumber, reason: error.reason)
                }
            }
        }
    }

    /// A journal of `operations` (lines joined by a merge) folded in sequence order, to be rewritten in collapsed
    /// form.
    private static func folded(_ operations: [PendingOperation], lastSequence: Int64) throws -> Journal {
        var journal = Journal(lastSequence: max(lastSequence, operations.map(\.sequence).max() ?? 0))
        for operation in operations.sorted(by: { $0.sequence < $1.sequence }) {
            do {
                try journal.enqueue(
                    operation.kind, table: operation.table, id: operation.id,
                    baseVersion: operation.baseVersion, item: operation.item, existing: operation)
            } catch let error as StoreError {
                throw StoreError.invalidJournalLine(file: StoreLayout.journalFileName, line: 0, reason: "\(error)")
            }
        }
        journal.persistedCount = 0
        journal.needsRewrite = true
        return journal
    }

    /// `true` when the operations are in strictly increasing sequence with at most one per record.
    static func isCollapsed(_ operations: [PendingOperation]) -> Bool {
        var keys = Set<RecordKey>()
        var previous: Int64 = 0
        for operation in operations {
            guard operation.sequence > previous, keys.insert(operation.key).inserted else { return false }
            previous = operation.sequence
        }
        return true
    }

    /// The line of `operation` in `journal.jsonl`: compact canonical JSON and a newline.
    static func line(_ operation: PendingOperation) -> [UInt8] {
        var bytes: [UInt8] = []
        CanonicalJSON.append(operation.json, style: .compact, to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    private mutating func append(_ operation: PendingOperation) {
        sequenceByKey[operation.key] = operation.sequence
        operations.append(operation)
        lines.append(Self.line(operation))
    }

    private mutating func takeSequence() -> Int64 {
        defer { nextSequence += 1 }
        return nextSequence
    }
}

/// The lines of the settled log (`.tablesync/settled.jsonl`): journal lines whose operations were pushed or
/// settled while the journal's rewrite was deferred. Each line takes one identical line out of the journal.
struct SettledLines {
    private var counts: [[UInt8]: Int] = [:]

    /// The log's lines, or `nil` when there is no log.
    static func load(layout: StoreLayout) throws -> SettledLines? {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(layout.settledFile)
        } catch let error as FileSystemError where error.isNotFound {
            return nil
        }
        return SettledLines(bytes)
    }

    /// The lines of a settled log's `bytes`. A torn last line (a run killed while appending) matches no journal
    /// line, so it is taken as it is.
    init(_ bytes: [UInt8]) {
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            counts[Array(line) + [UInt8(ascii: "\n")], default: 0] += 1
        }
    }

    /// Takes one settled line equal to `line` (a canonical journal line, newline included); whether there was one.
    mutating func take(_ line: [UInt8]) -> Bool {
        guard let count = counts[line] else { return false }
        counts[line] = count > 1 ? count - 1 : nil
        return true
    }
}

/// Machine-local journal state in `.tablesync/state.json`: the next sequence number, so numbers are not
/// reused after the journal empties.
struct JournalState {
    var nextSequence: Int64

    static func load(layout: StoreLayout) -> JournalState {
        guard let bytes = try? FileSystem.readFile(layout.stateFile),
            let value = try? JSONParser.parse(bytes),
            let next = value["nextSequence"]?.integerValue, next > 0
        else { return JournalState(nextSequence: 1) }
        return JournalState(nextSequence: next)
    }

    var json: JSONValue { ["nextSequence": .integer(nextSequence)] }
}
