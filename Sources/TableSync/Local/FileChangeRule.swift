import TableSyncStorage
/// What a scan makes of one record file that is not as the stat index last saw it: a pure rule, tested alone.
///
/// A file present and changed, given its index entry and the journal:
///
/// | pending | file | entry | outcome |
/// |---|---|---|---|
/// | insert, update | any | any | covered: the pending operation sends the file as it is |
/// | delete | any | any | a conflict: the file is not removed, the delete not sent |
/// | none | stamped, intact | none, or at the file's version | a server copy: indexed, nothing sent, never an edit |
/// | none | stamped, intact | at another version | uncompared: brought up to date from the server |
/// | none | no system properties | none | created: an insert |
/// | none | no system properties, but a `version` | some | modified: an update on the entry's version |
/// | none | no `version` | some, edited while sent | modified: an update on the entry's version |
/// | none | no `version` | some | uncompared: a copy of the record's creation put back (a reset, a switch), or an
/// edit on the entry's version; the server's copy and what it applied before tell which |
/// | none | server's system properties, not intact | at the file's version, or edited while sent | modified: an update
/// on the entry's version |
/// | none | server's system properties, not intact | none, or at another version | uncompared |
///
/// A file missing that the index or `HEAD` knows, given the journal and git:
///
/// | pending | in `HEAD` | outcome |
/// |---|---|---|
/// | delete | — | covered |
/// | insert, update | — | deleted (the journal collapses the pair) |
/// | none | yes, or the store is not in git | deleted: a delete on its version |
/// | none | no | removed by git: compared with the server first |
enum FileChangeRule {
    /// What the scan read of a changed file.
    struct File: Equatable {
        /// The file's `version`, if it names one.
        var version: String?
        /// Whether it carries the server's `version` and `updatedAt` (``ServerRecord/isServerCopy(_:)``).
        var carriesServerVersion: Bool
        /// Whether its ``SyncedMark`` vouches for its content.
        var markIntact: Bool
    }

    /// The outcome for a present file.
    enum Present: Equatable {
        case covered
        case deleteConflict
        case serverCopy
        case uncompared
        case created
        case modified
    }

    /// The outcome for `file`, whose index entry names `indexedVersion` (`.none`: no entry; `.some(nil)`: an entry
    /// without version), with `pending` in the journal. `editedWhileSent`: the entry says the file was edited on
    /// the content of its version while a push sent it (``StatIndex/Entry/editedWhileSent``), whatever version the
    /// file still names.
    static func decide(
        _ file: File, indexedVersion: String??, editedWhileSent: Bool = false, pending: PendingOperation.Kind?
    ) -> Present {
        switch pending {
        case .insert?, .update?: return .covered
        case .delete?: return .deleteConflict
        case nil: break
        }
        if file.markIntact {
            guard case .some(let version) = indexedVersion else { return .serverCopy }
            return version == file.version ? .serverCopy : .uncompared
        }
        guard file.carriesServerVersion else {
            guard indexedVersion != nil else { return .created }
            return file.version == nil && !editedWhileSent ? .uncompared : .modified
        }
        if case .some(let version) = indexedVersion, version == file.version || editedWhileSent { return .modified }
        return .uncompared
    }

    /// The outcome for a missing file.
    enum Missing: Equatable {
        case covered
        case deleted
        case removedByGit
    }

    /// The outcome for a missing file with `pending` in the journal; `inHead` is `nil` when the store is not in git.
    static func decideMissing(pending: PendingOperation.Kind?, inHead: Bool?) -> Missing {
        switch pending {
        case .delete?: return .covered
        case .insert?, .update?: return .deleted
        case nil: return inHead == false ? .removedByGit : .deleted
        }
    }
}
