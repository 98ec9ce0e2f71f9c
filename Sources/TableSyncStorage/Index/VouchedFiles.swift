/// The record files of a table's listing that its stat index has no entry for and git's index vouches for
/// (``GitIndexFile``), in name order: positions in the listing and in git's index, and each file's `stat`. Their
/// stat index entries are made only when asked (``entries()``), their version left in their blob: a sync records
/// them, while `status` only counts them (in a clone, 100,000 Strings of names, ids and hashes it would drop).
package struct VouchedFiles: Sendable, Equatable {
    struct File: Sendable {
        var position: Int
        var gitPosition: Int
        var status: FileSystem.Status
    }

    private let listing: DirectoryListing
    private let gitIndex: GitIndexFile
    private(set) var files: [File] = []

    init(listing: DirectoryListing, gitIndex: GitIndexFile) { (self.listing, self.gitIndex) = (listing, gitIndex) }

    /// How many files git's index vouches for.
    package var count: Int { files.count }

    mutating func append(_ file: File) { files.append(file) }

    /// The files' stat index entries, in name order.
    package func entries() -> [StatIndex.Entry] {
        files.compactMap { file in
            let fileName = listing.name(at: file.position)
            // The walk vouched only for names that spell out their id.
            guard let id = RecordFileName.id(forFileName: fileName) else { return nil }
            return StatIndex.Entry(
                fileName: fileName, id: id, status: file.status, contentHash: gitIndex.blobHash(at: file.gitPosition),
                version: nil, versionIsInBlob: true)
        }
    }

    /// Equal when they make the same entries.
    package static func == (first: VouchedFiles, second: VouchedFiles) -> Bool {
        first.count == second.count && first.entries() == second.entries()
    }
}
