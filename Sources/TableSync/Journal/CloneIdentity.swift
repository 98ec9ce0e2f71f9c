import SyncProtocol
import TableSyncStorage

/// Which clone of a git repository a store's work tree is: a random id kept in the repository's git directory
/// (`.git/tablesync/clone`), which `git clone` does not copy and neither `rm -rf .tablesync` nor `git clean -fdx`
/// removes. Operations carry the id of the clone that queued them (``PendingOperation/origin``), so that one
/// brought into another clone by a merge is left to the clone that will send it.
///
/// The git directory is found as git finds it, without running git: the nearest `.git` above the store, a
/// directory or a file naming one (`gitdir: PATH`, a linked work tree or a submodule, each with an id of its own).
enum CloneIdentity {
    /// What a store knows of its clone.
    enum Lookup: Equatable {
        /// The store is not in a git work tree: every operation it holds is its own to send.
        case outsideGit
        /// The clone's id; `nil` when none was made yet (a clone that never queued an operation).
        case clone(String?)

        /// The id to stamp new operations with, and to tell own operations by (``PendingOperation/isSent(by:)``):
        /// `nil` outside git, and an id no operation has in a clone that never made one.
        var sender: String? {
            switch self {
            case .outsideGit: nil
            case .clone(let id): id ?? ""
            }
        }
    }

    /// The clone of the work tree holding `root`; with `creating`, an id is made when there is none yet.
    static func of(storeRoot root: String, creating: Bool) throws -> Lookup {
        guard let gitDirectory = gitDirectory(containing: root) else { return .outsideGit }
        let directory = gitDirectory + "/tablesync"
        let path = directory + "/clone"
        if let bytes = try? FileSystem.readFile(path) {
            let id = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
            if !id.isEmpty { return .clone(id) }
        }
        guard creating else { return .clone(nil) }
        let id = String(Journal.newOperationID().prefix(12))
        try FileSystem.createDirectory(directory)
        var batch = DurableFileBatch()
        batch.write(Array((id + "\n").utf8), to: path)
        try batch.commit(temporaryDirectory: directory)
        return .clone(id)
    }

    /// The git directory of the work tree holding `root`, or `nil`.
    static func gitDirectory(containing root: String) -> String? {
        var directory = root
        while true {
            let candidate = directory + "/.git"
            if let status = try? FileSystem.status(candidate) {
                if status.isDirectory { return candidate }
                guard let bytes = try? FileSystem.readFile(candidate) else { return nil }
                let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
                guard text.hasPrefix("gitdir:") else { return nil }
                let named = String(text.dropFirst("gitdir:".count)).trimmingWhitespace()
                return named.hasPrefix("/") ? named : directory + "/" + named
            }
            let parent = FileSystem.parentDirectory(of: directory)
            if parent == directory || parent.isEmpty { return nil }
            directory = parent
        }
    }
}
