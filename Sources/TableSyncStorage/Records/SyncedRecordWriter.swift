import SyncProtocol

/// Writes records as the server has them — a pulled page, a pushed record's write-back, a settled conflict —
/// and records them in the table's ``StatIndex`` as synced.
///
/// One call is one durable step: the files go through one ``DurableFileBatch`` together with an intent file
/// (`.tablesync/intent`) that lists what the index is about to learn. If the process dies after the renames
/// but before the index is updated, ``recover(layout:)`` replays the intent, so a record written from the
/// server is never mistaken for a hand edit. A file whose canonical bytes are already on disk is not
/// rewritten (no churn in git, no wasted write).
package struct SyncedRecordWriter {
    let layout: StoreLayout
    /// Spare files to write over, and where replaced and removed contents go.
    var spares: SpareFiles?

    /// What one call did.
    package struct Outcome: Equatable {
        package var written = 0
        package var removed = 0
        package var unchanged = 0
        /// Ids left alone because their file was changed locally (see ``LocalGuard``).
        package var skipped: [String] = []

        package init(written: Int = 0, removed: Int = 0, unchanged: Int = 0, skipped: [String] = []) {
            self.written = written
            self.removed = removed
            self.unchanged = unchanged
            self.skipped = skipped
        }
    }

    /// What must hold locally before a record file is replaced or removed, so that no local change is lost.
    package enum LocalGuard: Equatable {
        /// Write unconditionally (a person settling a conflict).
        case none
        /// Pull: leave a record alone when its file is not as last synced (a hand edit or hand-made file not
        /// pushed yet). Its index entry stays, so the next push sends the edit on the version it was made on.
        case unchangedSinceSync
        /// Push write-back: the file must still hold the bytes that were sent (``SentFile`` by id). Otherwise it keeps
        /// the newer edit and only the index learns the server's new version, so the edit is pushed next on
        /// top of what the server now has.
        case sentContent([String: SentFile])

        /// Whether the guard decides by the file's index entry (the others need it only to skip unchanged bytes).
        var decidesByIndex: Bool {
            if case .unchangedSinceSync = self { return true }
            return false
        }
    }

    private struct Intent {
        var fileName: String
        var id: String
        var contentHash: String
        var version: String?
        var removal: Bool
    }

    /// Writes the records of `encoded` and removes the records with ids in `removals`, in `table`. The commit
    /// claims the staged spares it writes; the others go back when `encoded` is dropped.
    func apply(
        table: String, encoded: EncodedRecords, removals: [String], guard localGuard: LocalGuard = .none,
        index: inout StatIndex
    ) throws -> Outcome {
        let directory = layout.tableDirectory(table)
        try FileSystem.createDirectory(directory)
        var plan = WritePlan()
        try planWrites(encoded, in: directory, guard: localGuard, index: index, into: &plan)
        try planRemovals(removals, in: directory, guard: localGuard, index: index, into: &plan)
        return try commit(plan, table: table, directory: directory, index: &index)
    }

    /// What one ``apply(table:encoded:removals:guard:index:)`` writes, removes and tells the index, before any of it
    /// is done.
    private struct WritePlan {
        var outcome = Outcome()
        var files = DurableFileBatch()
        var intents: [Intent] = []
        /// Index entries learned without a write: files found to hold the bytes already, versions recorded alone.
        var refreshed: [StatIndex.Entry] = []
    }

    /// Plans the files of `encoded`: each written, left as it is (it holds the bytes already), or skipped where
    /// `localGuard` finds a newer local change.
    private func planWrites(
        _ encoded: EncodedRecords, in directory: String, guard localGuard: LocalGuard, index: StatIndex,
        into plan: inout WritePlan
    ) throws {
        for (position, (record, (bytes, hash))) in zip(encoded.records, encoded.files).enumerated() {
            let staged = encoded.stagedSlot(position)
            let id = record.id
            let version = record.version
            let fileName = RecordFileName.fileName(for: id)
            let path = directory + "/" + fileName
            // The index entry is looked up at most once, and only where it decides something: a lookup may read
            // a block of a run from disk, and a push's write-back (new bytes under a new version) needs none.
            let guardEntry = localGuard.decidesByIndex ? try index.entry(named: fileName) : nil
            if localGuard.decidesByIndex, guardEntry == nil {
                // Nothing synced there: the file is made only where none is (every file of an initial pull), with
                // no look first. One that is there or appears meanwhile was made by hand and is left alone (below).
                plan.files.create(bytes, at: path, staged: staged)
                plan.intents.append(
                    Intent(fileName: fileName, id: id, contentHash: hash, version: version, removal: false))
                plan.outcome.written += 1
                continue
            }
            let status = try FileSystem.status(path)
            let knownHash: String?
            switch try check(localGuard, id: id, path: path, status: status, entry: guardEntry) {
            case .proceed(let hash): knownHash = hash
            case .skip:
                plan.outcome.skipped.append(id)
                continue
            case .recordVersionOnly:
                // No file matches the entry, so the next scan reads the file and sends the newer edit on this version.
                plan.refreshed.append(
                    StatIndex.Entry(
                        fileName: fileName, id: id, size: StatIndex.Entry.unknownSize, modifiedNanoseconds: 0,
                        changedNanoseconds: 0, inode: 0, contentHash: StatIndex.Entry.editedWhileSent,
                        version: version))
                plan.outcome.skipped.append(id)
                continue
            }
            // A file known to hold other bytes is written without comparing; one that may hold these is compared.
            if let status, knownHash == nil || knownHash == hash {
                let entry = localGuard.decidesByIndex ? guardEntry : try index.entry(named: fileName)
                if let entry, entry.contentHash == hash, entry.matches(status) {
                    plan.outcome.unchanged += 1
                    continue
                }
                if status.size == Int64(bytes.count), (try? FileSystem.readFile(path)) == bytes {
                    plan.outcome.unchanged += 1
                    plan.refreshed.append(
                        StatIndex.Entry(fileName: fileName, id: id, status: status, contentHash: hash, version: version)
                    )
                    continue
                }
            }
            plan.files.write(bytes, to: path, staged: staged, replacedSize: status?.size)
            plan.intents.append(Intent(fileName: fileName, id: id, contentHash: hash, version: version, removal: false))
            plan.outcome.written += 1
        }
    }

    /// Plans the removal of the records of `removals`, each unless `localGuard` finds a local change to keep.
    private func planRemovals(
        _ removals: [String], in directory: String, guard localGuard: LocalGuard, index: StatIndex,
        into plan: inout WritePlan
    ) throws {
        for id in removals {
            let fileName = RecordFileName.fileName(for: id)
            let path = directory + "/" + fileName
            let status = try FileSystem.status(path)
            let entry = try index.entry(named: fileName)
            if case .skip = try check(localGuard, id: id, path: path, status: status, entry: entry) {
                plan.outcome.skipped.append(id)
                continue
            }
            if status != nil {
                plan.files.remove(path)
                plan.outcome.removed += 1
            }
            if status != nil || entry != nil {
                plan.intents.append(Intent(fileName: fileName, id: id, contentHash: "", version: nil, removal: true))
            }
        }
    }

    /// Makes `plan` durable: the intent first, then the record files in one batch, then the index; files a person
    /// made meanwhile where the plan expected none are left alone and reported skipped.
    private func commit(_ plan: WritePlan, table: String, directory: String, index: inout StatIndex) throws -> Outcome {
        var plan = plan
        if plan.intents.isEmpty {
            try index.record(plan.refreshed, removed: [], layout: layout, table: table)
            return plan.outcome
        }
        // The intent goes first in the batch so that it is in place before any record file is renamed.
        var durable = DurableFileBatch()
        durable.write(Self.encodeIntents(table: table, plan.intents), to: layout.intentFile)
        durable.append(plan.files)
        let madeByHand = try durable.commit(temporaryDirectory: layout.temporaryDirectory, spares: spares)
        if !madeByHand.isEmpty {
            // Files that were there after all: a person's, not pushed yet; the index does not learn them.
            let kept = plan.intents.partition { !$0.removal && madeByHand.contains(directory + "/" + $0.fileName) }
            plan.outcome.written -= plan.intents.count - kept
            plan.outcome.skipped += plan.intents[kept...].map(\.id)
            plan.intents.removeSubrange(kept...)
        }
        try recordInIndex(table: table, intents: plan.intents, extra: plan.refreshed, index: &index)
        try FileSystem.removeFile(layout.intentFile)
        return plan.outcome
    }

    private enum GuardDecision {
        /// Go ahead; the hash of the file's current bytes when the check learned it.
        case proceed(knownHash: String?)
        case skip
        case recordVersionOnly
    }

    /// `entry` is the index's entry for the file, if any.
    private func check(
        _ localGuard: LocalGuard, id: String, path: String, status: FileSystem.Status?,
        entry: StatIndex.Entry?
    ) throws -> GuardDecision {
        switch localGuard {
        case .none:
            return .proceed(knownHash: nil)
        case .unchangedSinceSync:
            guard let status else { return entry == nil ? .proceed(knownHash: nil) : .skip }
            guard let entry else { return .skip }
            if entry.matches(status) { return .proceed(knownHash: entry.contentHash) }
            return ContentHash.of(try FileSystem.readFile(path)) == entry.contentHash
                ? .proceed(knownHash: entry.contentHash) : .skip
        case .sentContent(let files):
            guard let sent = files[id] else { return .proceed(knownHash: nil) }
            return try sent.isStill(at: path, current: status) ? .proceed(knownHash: sent.hash) : .recordVersionOnly
        }
    }

    /// Finishes the index update of a run that died after its files were renamed into place.
    package static func recover(layout: StoreLayout) throws {
        let writer = SyncedRecordWriter(layout: layout)
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(layout.intentFile)
        } catch let error as FileSystemError where error.isNotFound {
            return
        }
        var byTable: [String: [Intent]] = [:]
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: "\t"), maxSplits: 5, omittingEmptySubsequences: false)
                .map { String(decoding: $0, as: UTF8.self) }
            guard fields.count == 6, TableName.isValid(fields[0]) else { continue }
            byTable[fields[0], default: []].append(
                Intent(
                    fileName: fields[1], id: fields[2], contentHash: fields[3],
                    version: fields[5].isEmpty ? nil : fields[5],
                    removal: fields[4] == "remove"))
        }
        for (table, intents) in byTable {
            var index = try StatIndex.load(layout: layout, table: table)
            try writer.recordInIndex(table: table, intents: intents, extra: [], index: &index, checkingContent: true)
        }
        try FileSystem.removeFile(layout.intentFile)
    }

    /// Adds to the index what is now on disk for each intent: files whose content is the intended one, and
    /// removals that happened. Anything else (a rename that never happened) keeps its old entry. After a crash
    /// (`checkingContent`), that is known only by reading the file.
    private func recordInIndex(
        table: String, intents: [Intent], extra: [StatIndex.Entry], index: inout StatIndex,
        checkingContent: Bool = false
    ) throws {
        var updated = extra
        var removed: [String] = []
        let directory = layout.tableDirectory(table)
        let paths = intents.map { directory + "/" + $0.fileName }
        // What is at each path now, looked up on every core (a page's worth of path lookups).
        let statuses = concurrentMap(paths) { path in Result { try FileSystem.status(path) } }
        for ((intent, path), status) in zip(zip(intents, paths), statuses) {
            if intent.removal {
                if try status.get() == nil { removed.append(intent.fileName) }
                continue
            }
            guard let status = try status.get() else { continue }
            if checkingContent {
                // After a crash: what the index has already (a replay after the index was written) or what the
                // rename left in place (the old content, when the crash came before it) is not learned again.
                if let entry = try index.entry(named: intent.fileName), entry.contentHash == intent.contentHash,
                    entry.matches(status)
                {
                    continue
                }
                if ContentHash.of(try FileSystem.readFile(path)) != intent.contentHash { continue }
            }
            updated.append(
                StatIndex.Entry(
                    fileName: intent.fileName, id: intent.id, status: status,
                    contentHash: intent.contentHash, version: intent.version))
        }
        try index.record(updated, removed: removed, layout: layout, table: table)
    }

    private static func encodeIntents(table: String, _ intents: [Intent]) -> [UInt8] {
        var bytes: [UInt8] = []
        for intent in intents {
            let fields = [
                table, intent.fileName, intent.id, intent.contentHash, intent.removal ? "remove" : "write",
                intent.version ?? ""
            ]
            let line = fields.joined(separator: "\t") + "\n"
            bytes.append(contentsOf: line.utf8)
        }
        return bytes
    }
}

extension StatIndex.Entry {
    package init(
        fileName: String, id: String, status: FileSystem.Status, contentHash: String, version: String?,
        versionIsInBlob: Bool = false
    ) {
        self.init(
            fileName: fileName, id: id, size: status.size, modifiedNanoseconds: status.modifiedNanoseconds,
            changedNanoseconds: status.changedNanoseconds, inode: status.inode, contentHash: contentHash,
            version: version, versionIsInBlob: versionIsInBlob)
    }
}
