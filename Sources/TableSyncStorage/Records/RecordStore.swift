import SyncProtocol

/// The store of record files and their stat index: the files (``RecordFiles``), the index of each table as last
/// synced (``StatIndex``, loaded once and kept), and the synced writes that keep the two in step
/// (``SyncedRecordWriter``). Owned by the ``SyncContext`` that holds the store's lock.
package struct RecordStore: Sendable {
    /// The record files themselves.
    let files: RecordFiles
    /// Spare files that synced writes go over.
    let spares: SpareFiles
    private var indexes: [String: StatIndex] = [:]
    /// The tables whose index this store wrote to.
    package private(set) var writtenIndexes: Set<String> = []

    package init(layout: StoreLayout, spares: SpareFiles) {
        files = RecordFiles(layout: layout)
        self.spares = spares
    }

    /// The index of `table`, loaded on first use.
    package mutating func index(_ table: String) throws -> StatIndex {
        if let index = indexes[table] { return index }
        let index = try StatIndex.load(layout: files.layout, table: table)
        indexes[table] = index
        return index
    }

    /// The index's entry of the record's file: what was last synced of it.
    package mutating func syncedEntry(table: String, id: String) throws -> StatIndex.Entry? {
        try index(table).entry(named: RecordFileName.fileName(for: id))
    }

    /// Records `entries` in `table`'s index as synced: files found to hold the server's copies already (stamped and
    /// intact, ``SyncedMark``), so nothing is written.
    package mutating func indexUnchanged(_ entries: [StatIndex.Entry], table: String) throws {
        var index = try self.index(table)
        indexes[table] = nil
        writtenIndexes.insert(table)
        try index.record(entries, removed: [], layout: files.layout, table: table)
        indexes[table] = index
    }

    /// Writes records as the server has them and marks them synced; removes the records in `removals`. Pull,
    /// push write-back, purge and conflict resolution go through here.
    package mutating func applySynced(
        table: String, encoded: EncodedRecords, removals: [String] = [],
        guard localGuard: SyncedRecordWriter.LocalGuard = .none
    ) throws -> SyncedRecordWriter.Outcome {
        // The index moves out of the cache while it changes, so that changing it does not copy every entry; if
        // the write fails, the next use loads it from disk.
        var index = try self.index(table)
        indexes[table] = nil
        writtenIndexes.insert(table)
        let outcome = try SyncedRecordWriter(layout: files.layout, spares: spares)
            .apply(table: table, encoded: encoded, removals: removals, guard: localGuard, index: &index)
        indexes[table] = index
        return outcome
    }
}
