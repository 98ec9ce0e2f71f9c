import Synchronization

/// Spare files written ahead of the commit that puts them in place, each holding one file's new bytes: the owner
/// of those spares until a commit claims them.
///
/// A ``DurableFileBatch`` claims a spare (``Slot/claim()``) when its commit starts writing, and from then on the
/// batch answers for it. Whatever is not claimed goes back to its ``SpareFiles`` when the last reference to this
/// goes away: a record the commit skipped, a page whose commit never ran, a staging that failed halfway. So no
/// caller hands a spare back by hand, and none is handed back twice.
///
/// A class, not a non-copyable value: staged records travel through dictionaries and generic pipelines
/// (``CommitSequence``), which hold only copyable values.
package final class StagedSpares: Sendable {
    /// One staged spare: the one at `index` of its owner.
    package struct Slot: Sendable {
        let owner: StagedSpares
        let index: Int

        /// Takes the spare out of its owner's hands into the caller's; `nil` when it was claimed before.
        func claim() -> String? {
            owner.paths.withLock { paths in
                defer { paths[index] = nil }
                return paths[index]
            }
        }
    }

    private let spares: SpareFiles
    /// The spares, in the order their bytes were staged; `nil` once claimed.
    private let paths: Mutex<[String?]>

    /// Writes each of `contents` into a spare, in the directory of one staging batch
    /// (``SpareFiles/stagingBatch()``). On failure, the spares written so far go back at once.
    init(writing contents: [[UInt8]], into spares: SpareFiles) throws {
        self.spares = spares
        var written: [String] = []
        written.reserveCapacity(contents.count)
        do {
            let batch = try spares.stagingBatch()
            for (index, bytes) in contents.enumerated() {
                written.append(try spares.write(bytes, batch: batch, index: index))
            }
        } catch {
            spares.keep(written)
            throw error
        }
        paths = Mutex(written)
    }

    /// The spare staged at `index`, for a commit to claim.
    func slot(_ index: Int) -> Slot { Slot(owner: self, index: index) }

    /// The spares not claimed yet, in staging order (for tests and checks; claiming is done through ``Slot``).
    var unclaimed: [String] { paths.withLock { $0.compactMap(\.self) } }

    deinit {
        spares.keep(paths.withLock { $0.compactMap(\.self) })
    }
}
