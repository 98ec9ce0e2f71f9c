import SyncProtocol

/// The record files of a store, `tables/<Table>/<file>`, read and written directly, without the stat index: what
/// a push reads while other work goes on, and the files behind local changes. ``RecordStore`` adds the index.
package struct RecordFiles: Sendable {
    package let layout: StoreLayout

    package init(layout: StoreLayout) { self.layout = layout }

    /// The record file of `id`, checked; `nil` when there is none, an error when it is broken.
    package func load(table: String, id: String) throws -> RecordFile.Loaded? {
        let path = layout.recordFile(table: table, id: id)
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(path)
        } catch let error as FileSystemError where error.isNotFound {
            return nil
        }
        switch RecordFile.check(
            bytes: bytes, fileName: RecordFileName.fileName(for: id), relativePath: layout.relative(path))
        {
        case .success(let loaded): return loaded
        case .failure(let problem): throw StoreError.brokenRecordFile(problem)
        }
    }

    /// The record file of `id` as the push sends it, and what the write-back needs to know it is unchanged:
    /// `scanned` (the copy the scan read) when its `stat` says the file has not changed since, else the file read
    /// now. `nil` when there is no file; an error when it is broken.
    package func toSend(
        table: String, id: String, scanned: ReadRecordFile?
    ) throws -> (loaded: RecordFile.Loaded, sent: SentFile)? {
        let clock = FileSystem.timestampClockNanoseconds()
        let status = try FileSystem.status(layout.recordFile(table: table, id: id))
        if let scanned, scanned.isCurrent(status) {
            return (scanned.loaded, scanned.sentFile)
        }
        guard let status, let loaded = try load(table: table, id: id) else { return nil }
        return (loaded, ReadRecordFile(loaded: loaded, hash: nil, status: status, clock: clock).sentFile)
    }

    /// Every valid record of `table` (broken files are skipped), without the store's ``SyncedMark``.
    package func all(table: String) throws -> [[String: JSONValue]] {
        let directory = layout.tableDirectory(table)
        var records: [[String: JSONValue]] = []
        for (name, status) in try FileSystem.listDirectory(directory)
        where status.isRegularFile && RecordFileName.looksLikeRecordFile(name) {
            let bytes = try FileSystem.readFile(directory + "/" + name)
            if case .success(let loaded) = RecordFile.check(
                bytes: bytes, fileName: name, relativePath: "tables/\(table)/\(name)")
            {
                records.append(SyncedMark.removed(from: loaded.record))
            }
        }
        return records
    }

    /// How many record files `table` has.
    package func count(table: String) throws -> Int {
        try FileSystem.listNames(layout.tableDirectory(table)).filter(RecordFileName.looksLikeRecordFile).count
    }

    /// How many of `ids` have a record file in `table`.
    package func existingCount(table: String, ids: [String]) -> Int {
        ids.filter { FileSystem.exists(layout.recordFile(table: table, id: $0)) }.count
    }

    /// `true` when `id` has a record file in `table`.
    package func exists(table: String, id: String) -> Bool {
        FileSystem.exists(layout.recordFile(table: table, id: id))
    }

    /// Writes `record` canonically as the file of `id`, durably.
    package func write(_ record: [String: JSONValue], table: String, id: String) throws {
        try FileSystem.createDirectory(layout.tableDirectory(table))
        var batch = DurableFileBatch()
        batch.write(RecordFile.encode(record), to: layout.recordFile(table: table, id: id))
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
    }

    /// Removes the file of `id`, durably.
    package func remove(table: String, id: String) throws {
        var batch = DurableFileBatch()
        batch.remove(layout.recordFile(table: table, id: id))
        try batch.commit(temporaryDirectory: layout.temporaryDirectory)
    }
}
