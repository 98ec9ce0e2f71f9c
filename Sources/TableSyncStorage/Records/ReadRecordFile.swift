/// A record file read during a scan, kept so that the push sends what the scan read instead of reading and
/// parsing the file again, as long as its `stat` vouches that it did not change (see ``SentFile``).
package struct ReadRecordFile: Sendable {
    package var loaded: RecordFile.Loaded
    /// The content hash (``ContentHash``) of ``RecordFile/Loaded/bytes`` when the scan computed it.
    package var hash: String?
    /// The file's status just before it was read.
    package var status: FileSystem.Status
    /// The file-timestamp clock just before that `stat`.
    package var clock: Int64

    package init(loaded: RecordFile.Loaded, hash: String?, status: FileSystem.Status, clock: Int64) {
        self.loaded = loaded
        self.hash = hash
        self.status = status
        self.clock = clock
    }

    /// What the push knows about the file when it sends these bytes.
    var sentFile: SentFile {
        SentFile(hash: hash ?? ContentHash.of(loaded.bytes), status: status, changesVisibleAfter: clock)
    }

    /// Whether these are still the file's bytes, now that its status is `current`.
    func isCurrent(_ current: FileSystem.Status?) -> Bool {
        guard let current, let vouched = SentFile.vouching(status, changesVisibleAfter: clock) else { return false }
        return vouched == current
    }
}

/// Record files a scan read, by record, at most `limit` of them.
package struct ReadRecordFiles: Sendable {
    let limit: Int
    private var files: [RecordKey: ReadRecordFile] = [:]

    package init(limit: Int) {
        self.limit = limit
    }

    package mutating func keep(_ file: ReadRecordFile, for key: RecordKey) {
        guard files.count < limit else { return }
        files[key] = file
    }

    /// The file kept for `key`, handed over once.
    package mutating func take(_ key: RecordKey) -> ReadRecordFile? {
        files.removeValue(forKey: key)
    }
}
