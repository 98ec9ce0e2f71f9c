import SyncProtocol

/// Records as the server has them, with their record files' canonical bytes and the SHA-256 of those bytes, and,
/// once staged, those bytes already written into spare files.
///
/// This is the part of a synced write that needs neither the index nor the store: a push stages a batch's
/// write-back and a pull stages a page (``stage(in:)``) while the previous one is committed, so that the commit only
/// checks each file, makes the spares durable and puts them in place. A staged spare that ends up not used (the
/// file was edited by hand, or already held these bytes) goes back to the spares.
struct EncodedRecords: Sendable {
    /// The records, as the server sent them.
    let records: [ServerRecord]
    /// Each record's canonical file bytes, stamped with its ``SyncedMark``, and their hash (hex), in `records` order.
    let files: [(bytes: [UInt8], hash: String)]
    /// Per record, in `records` order, the spare file that holds its bytes already; empty until staged (staging
    /// stages every record or none).
    private(set) var stagedFiles: [String] = []

    /// Encodes and hashes every record, on every core.
    init(_ records: [ServerRecord]) {
        self.records = records
        files = concurrentMap(records) { record in
            let bytes = SyncedMark.stamped(record.properties)
            return (bytes: bytes, hash: SHA256.hexDigest(of: bytes))
        }
    }

    /// The spare file that holds record `index`'s bytes, if staged.
    func stagedFile(_ index: Int) -> String? {
        stagedFiles.isEmpty ? nil : stagedFiles[index]
    }

    /// Writes every record's bytes into a spare file, ahead of the commit that puts them in place (new files in the
    /// other directory of spares than the batch staged before: ``SpareFiles/stagingBatch()``). On failure the
    /// spares written so far go back, and nothing is staged.
    mutating func stage(in spares: SpareFiles) throws {
        guard !files.isEmpty else { return }
        let batch = try spares.stagingBatch()
        var written: [String] = []
        written.reserveCapacity(files.count)
        do {
            for (index, file) in files.enumerated() {
                written.append(try spares.write(file.bytes, batch: batch, index: index))
            }
        } catch {
            spares.keep(written)
            throw error
        }
        stagedFiles = written
    }
}
