import SyncProtocol

/// Records as the server has them, XX, and,
/// once staged, those bytes already written into spare files.
///
/// This is the part of a synced write that needs neither the index nor the store: a push stages a batch's
/// write-back and a pull stages a page (``stage(in:)``) while the previous one is committed, so that the commit only
/// checks each file, makes the spares durable and puts them in place. A staged spare that ends up not used (the
/// file was edited by hand, or already held these bytes) goes back to the spares when these records are dropped
/// (``StagedSpares``).
package struct EncodedRecords: Sendable {
    /// The records, as the server sent them.
    let records: [ServerRecord]
    /// Each record's canonical file bytes, stamped with its ``SyncedMark``, and their hash (hex), in `records` order.
    let files: [(bytes: [UInt8], hash: String)]
    /// The spare files that hold each record's bytes already, in `records` order; `nil` until staged (staging
    /// stages every record or none).
    private(set) var staged: StagedSpares?

    /// Encodes and hashes every record, on every core.
    package init(_ records: [ServerRecord]) {
        self.records = records
        files = concurrentMap(records) { record in
            let bytes = SyncedMark.stamped(record.properties)
            return (bytes: bytes, hash: ContentHash.of(bytes))
        }
    }

    /// The staged spare that holds record `index`'s bytes, for a commit to claim; `nil` when not staged.
    func stagedSlot(_ index: Int) -> StagedSpares.Slot? {
        staged?.slot(index)
    }

    /// Writes every record's bytes into a spare file, ahead of the commit that puts them in place (new files in the
    /// other directory of spares than the batch staged before: ``SpareFiles/stagingBatch()``). On failure nothing is
    /// staged, and no spare is lost.
    package mutating func stage(in spares: SpareFiles) throws {
        guard !files.isEmpty else { return }
        staged = try StagedSpares(writing: files.map(\.bytes), into: spares)
    }
}
