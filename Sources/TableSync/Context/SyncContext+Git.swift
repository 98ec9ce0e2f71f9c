import SyncProtocol
import TableSyncStorage

/// The store's git repository, as the context's scans, pushes and commits see it.
extension SyncContext {
    /// The git work tree the store lives in, looked up once per context; `nil` outside git.
    package func gitRepository() -> GitRepository? {
        if let known = gitLookup { return known }
        let found = GitRepository.containing(store: layout.root)
        gitLookup = .some(found)
        return found
    }

    /// What `HEAD` says of the store's tables, when the store is in git: as the push, pull or sync under way read
    /// it, or now.
    func gitBaseline() throws -> GitBaseline? {
        if let operationBaseline { return operationBaseline }
        if case .some(nil) = gitLookup { return nil }
        // One `git rev-parse` finds the repository (the first time) and reads HEAD and the tables' trees.
        let asked = GitBaseline.revisions(tables: settings.tables)
        guard let located = GitRepository.locate(store: layout.root, revisions: asked) else {
            gitLookup = .some(nil)
            return nil
        }
        gitLookup = .some(located.repository)
        return try GitBaseline.read(
            repository: located.repository, layout: layout, tables: settings.tables, revisions: located.revisions)
    }

    /// What `HEAD` holds for each of `keys` (as the push under way read `HEAD`): the record's own content
    /// (``ServerRecord/content(_:)``), for each record `HEAD` has a readable file of; empty outside git.
    func committedContents(_ keys: [RecordKey]) throws -> [RecordKey: [String: JSONValue]] {
        guard !keys.isEmpty, let git = try gitBaseline() else { return [:] }
        var contents: [RecordKey: [String: JSONValue]] = [:]
        for (table, tableKeys) in Dictionary(grouping: keys, by: \.table) {
            let files = try git.committedContents(
                table: table, names: tableKeys.map { RecordFileName.fileName(for: $0.id) })
            for key in tableKeys {
                let name = RecordFileName.fileName(for: key.id)
                guard let bytes = files[name],
                    case .success(let loaded) = RecordFile.check(
                        bytes: bytes, fileName: name, relativePath: "HEAD:tables/\(table)/\(name)")
                else { continue }
                contents[key] = ServerRecord.content(loaded.record)
            }
        }
        return contents
    }

    /// Records the store's own commit (`sync --commit`, `watch --commit`), just made: it is the last sync's commit
    /// (``recordSyncedHead(_:)``), and each table's tree in it counts as reconciled (``GitState/trees``) when every
    /// record file the tree holds beyond the one reconciled before is known to the stat index or the journal: files
    /// the sync itself pulled or sent. The next scan then asks git nothing more than `HEAD`, where it would otherwise
    /// list every file the commit added (all of them after a store's first sync).
    package func recordStoreCommit() throws {
        try recordSyncedHead()
        guard let git = try gitBaseline() else { return }
        var state = git.state
        for table in settings.tables {
            guard let tree = git.trees[table], state.trees[table] != tree,
                let added = try git.filesBeyondIndex(table: table, indexIsEmpty: false)
            else { continue }
            let index = try StatIndex.load(layout: layout, table: table)
            let anyUnknown = try added.contains { name in
                try RecordFileName.looksLikeRecordFile(name)
                    && LocalChangeScanner.isUnknown(name, table: table, index: index, journal: journal)
            }
            if !anyUnknown { state.trees[table] = tree }
        }
        if state != git.state { try state.save(layout: layout) }
    }

    /// The server's copy of `version` of `key`'s record as git's history holds it: the record's own content
    /// (``ServerRecord/content(_:)``) in the newest of the last ``historyDepth`` commits of `HEAD` that changed the
    /// record's file and left it intact (``SyncedMark``) at that version; `nil` when none did, or outside git.
    func syncedCopy(_ key: RecordKey, version: String) throws -> [String: JSONValue]? {
        guard let repository = gitRepository() else { return nil }
        let path = "tables/\(key.table)/\(RecordFileName.fileName(for: key.id))"
        let commits = try repository.run(
            ["log", "--format=%H", "-n", "\(Self.historyDepth)", "HEAD", "--", path], allowing: [128]
        ).text.split(separator: "\n").map(String.init).filter(GitObjectName.isValid)
        for (commit, bytes) in zip(commits, try repository.objectContents(commits.map { "\($0):./\(path)" })) {
            guard let bytes,
                case .success(let loaded) = RecordFile.check(
                    bytes: bytes, fileName: RecordFileName.fileName(for: key.id), relativePath: "\(commit):\(path)"),
                loaded.record[SystemProperty.version]?.stringValue == version,
                SyncedMark.isIntact(loaded.record, bytes: loaded.bytes, bytesAreCanonical: loaded.bytesAreCanonical)
            else { continue }
            return ServerRecord.content(loaded.record)
        }
        return nil
    }

    /// Records in ``SyncedTrees`` the tree each table's stat index makes (``StatIndex/syncedTreeID()``), for a store
    /// in a repository that names objects by SHA-1: recomputed for a table whose index this run wrote or that the
    /// file has no tree of, the trees recorded before kept only when `HEAD` has them (git's index stages that tree
    /// until the next commit, so a clone or a lost cache can still use it). A table whose files git converts when it
    /// stores them (``GitBaseline/storesAsTheyAre(table:name:layout:)``, asked of one file) is left as it is: its
    /// content hashes are not git's blob ids, and make no tree git would commit. A push, pull or sync does it when
    /// it ends well.
    func recordSyncedTrees() throws {
        guard let git = try gitBaseline(), git.repository.objectFormat == "sha1" else { return }
        var trees = git.syncedTrees
        for table in settings.tables where store.writtenIndexes.contains(table) || trees[table] == nil {
            let index = try store.index(table)
            guard let sample = try index.firstEntry(),
                try git.storesAsTheyAre(table: table, name: sample.fileName, layout: layout)
            else { continue }
            var kept = Set(trees[table]?.filter { $0 == git.trees[table] } ?? [])
            if let tree = try index.syncedTreeID() { kept.insert(tree) }
            trees[table] = kept.isEmpty ? nil : kept
        }
        for table in trees.keys where !settings.tables.contains(table) { trees[table] = nil }
        try SyncedTrees.save(trees, layout: layout)
    }

    /// The server version of the record as last synced, from the stat index; an entry made without reading its file
    /// (``StatIndex/Entry/versionIsInBlob``) has it read from its blob in git.
    /// - Throws: ``StoreError/damagedIndex(file:reason:)`` when git cannot give that blob's version.
    func syncedVersion(table: String, id: String) throws -> String? {
        guard let entry = try store.syncedEntry(table: table, id: id) else { return nil }
        guard entry.versionIsInBlob else { return entry.version }
        let git = try gitBaseline()
        guard let version = try git?.versions(ofBlobs: [entry.contentHash])[entry.contentHash] else {
            throw GitBaseline.versionUnknown(of: entry, table: table, inGit: git != nil)
        }
        return version
    }

    /// How many of a record file's commits ``syncedCopy(_:version:)`` looks through.
    static let historyDepth = 64

    /// Remembers `head` (the commit `HEAD` names now, when not given) as the one of the store's last sync
    /// (``GitState/syncedHead``): a later `HEAD` behind it is refused (``GitGuard``). A push, pull or sync does it
    /// when it ends; `sync --commit` again after its commit.
    package func recordSyncedHead(_ head: String? = nil) throws {
        guard let repository = gitRepository() else { return }
        let current = try head ?? repository.run(["rev-parse", "-q", "--verify", "HEAD"], allowing: [1]).text
        guard GitObjectName.isValid(current) else { return }
        var state = GitState.load(layout: layout)
        guard state.syncedHead != current else { return }
        state.syncedHead = current
        try state.save(layout: layout)
    }
}
