/// What a push knows about a record file whose content it sends: the content hash (``ContentHash``) of the bytes,
/// and the `stat` the file had when they were read, if that `stat` can vouch for them.
///
/// The write-back must not overwrite an edit made while the push was in flight, so it checks that the file still
/// holds the bytes sent. An equal `stat` proves it without reading the file, but only for a file last changed
/// before the run looked at it: a file changed in the same clock tick as the read could change again without
/// its `stat` showing it ("racily clean", as in git's index). Such a file is read and hashed instead.
package struct SentFile: Sendable, Equatable {
    /// The content hash of the bytes sent (``ContentHash``).
    package var hash: String
    /// The file's status just before it was read, when it can vouch for the bytes; `nil` when it cannot.
    var status: FileSystem.Status?

    /// A file read with `status` taken just before reading it; `changesVisibleAfter` is the file-timestamp clock
    /// (``FileSystem/timestampClockNanoseconds()``) taken before that `stat`.
    init(hash: String, status: FileSystem.Status?, changesVisibleAfter: Int64) {
        self.hash = hash
        self.status = status.flatMap { Self.vouching($0, changesVisibleAfter: changesVisibleAfter) }
    }

    /// `status` when it can vouch for the bytes read just after it: the file was last changed before
    /// `changesVisibleAfter`, so a later change gives it a different status. `nil` otherwise.
    static func vouching(_ status: FileSystem.Status, changesVisibleAfter: Int64) -> FileSystem.Status? {
        status.modifiedNanoseconds < changesVisibleAfter && status.changedNanoseconds < changesVisibleAfter
            ? status : nil
    }

    /// A file known by its hash alone: checked by reading it.
    init(hash: String) {
        self.hash = hash
        self.status = nil
    }

    /// Whether the file at `path`, whose status is now `current`, still holds the bytes sent.
    func isStill(at path: String, current: FileSystem.Status?) throws -> Bool {
        guard let current else { return false }
        if let status, status == current { return true }
        return ContentHash.of(try FileSystem.readFile(path)) == hash
    }
}
