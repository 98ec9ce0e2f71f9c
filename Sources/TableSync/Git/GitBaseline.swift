import Foundation
import SyncProtocol
import TableSyncStorage

/// Where `HEAD` stands against the commit of the store's last sync (``GitState/syncedHead``).
enum HeadPosition: Equatable, Sendable {
    /// At that commit or after it: new commits, a merge, a fast-forward, a revert.
    case atOrAfter
    /// Strictly behind it: a checkout of history, a reset to an older commit. Its files and journal are older
    /// than what the store has sent.
    case behind
    /// Neither: another branch, or history rewritten by a rebase or an amend.
    case elsewhere
    /// No sync recorded (a fresh clone, a lost cache), no commit yet, or git does not know the commit any more.
    case unknown
}

/// What a scan of a store in git learns from `HEAD`, beside the stat index: which missing record files git still
/// has (a file deleted in the work tree) and which it removed itself (a merge, checkout or reset took them away),
/// and the files `HEAD` has that the index never knew (a clone, a lost cache, a merge that brought records) whose
/// deletion the index cannot see.
///
/// Reading it costs two `git` commands per scan; a table's tree is listed only when it changed since the last
/// push reconciled it (``GitState/trees``).
struct GitBaseline: Sendable {
    let repository: GitRepository
    /// The commit `HEAD` names; `nil` before the first commit.
    let head: String?
    /// Per table, the tree of `tables/<table>/` in `HEAD` (absent when `HEAD` has no such directory).
    let trees: [String: String]
    /// What the last run remembered.
    let state: GitState
    /// Where `HEAD` stands against the last sync's commit.
    let position: HeadPosition
    /// The trees the store recorded as synced, by table (``SyncedTrees``).
    var syncedTrees: [String: Set<String>] = [:]

    /// The baseline of the store at `layout` in `repository`, for `tables`, from `HEAD` and each table's tree in it
    /// (`revisions`, answered by ``GitRepository/locate(store:revisions:)``).
    static func read(
        repository: GitRepository, layout: StoreLayout, tables: [String], revisions: [String?]
    ) throws -> GitBaseline {
        let state = GitState.load(layout: layout)
        let head = revisions.first ?? nil
        var trees: [String: String] = [:]
        for (offset, table) in tables.enumerated() where offset + 1 < revisions.count {
            if let tree = revisions[offset + 1] { trees[table] = tree }
        }
        var position = HeadPosition.unknown
        if let head, let synced = state.syncedHead, GitObjectName.isValid(synced) {
            position = head == synced ? .atOrAfter : try Self.position(of: head, against: synced, in: repository)
        }
        return GitBaseline(
            repository: repository, head: head, trees: trees, state: state, position: position,
            syncedTrees: SyncedTrees.load(layout: layout))
    }

    /// Git's index of `table`'s files, when it may vouch for them: the repository names objects by SHA-1 (the
    /// store's content hash, ``ContentHash``), git's index is the usual file, and the table's files as it stages
    /// them make a tree the store recorded as synced (``SyncedTrees``), and git does not convert their bytes on
    /// checkout (``GitIndexFile/holdsBlobBytes(directory:)``). `nil` otherwise, and the files are read.
    func vouchedFiles(table: String, layout: StoreLayout) throws -> GitIndexFile? {
        guard let synced = syncedTrees[table], repository.objectFormat == "sha1",
            ProcessInfo.processInfo.environment["GIT_INDEX_FILE"] == nil,
            let index = try GitIndexFile.read(
                path: repository.gitFile("index"), directory: repository.storePrefix + "tables/\(table)/"),
            let tree = index.stagedTree, synced.contains(tree),
            try index.holdsBlobBytes(directory: layout.tableDirectory(table))
        else { return nil }
        return index
    }

    /// Whether git would store the record file `name` of `table` as the bytes it holds: `git hash-object --path`
    /// of it, which applies what `git add` would (`core.autocrlf`, an `eol`, `filter` or `working-tree-encoding`
    /// attribute), gives its content hash. `false` where git converts the table's files, whose content hashes are
    /// then not git's blob ids; `true` when the file is gone.
    func storesAsTheyAre(table: String, name: String, layout: StoreLayout) throws -> Bool {
        let path = layout.tableDirectory(table) + "/" + name
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(path)
        } catch let error as FileSystemError where error.isNotFound {
            return true
        }
        let blob = try repository.run(["hash-object", "--path", "tables/\(table)/\(name)", "--", path]).text
        return blob == ContentHash.of(bytes)
    }

    /// What `read` asks `git rev-parse`: `HEAD`, then each table's tree in it.
    static func revisions(tables: [String]) -> [String] {
        ["HEAD"] + tables.map { "HEAD:./tables/\($0)" }
    }

    /// Counts the commits each side has that the other has not (`git rev-list --left-right --count`).
    private static func position(
        of head: String, against synced: String, in repository: GitRepository
    ) throws -> HeadPosition {
        let answer = try repository.run(["rev-list", "--left-right", "--count", "\(head)...\(synced)"], allowing: [128])
        let counts = answer.text.split(whereSeparator: { $0 == "\t" || $0 == " " }).compactMap { Int($0) }
        guard answer.status == 0, counts.count == 2 else { return .unknown }
        switch (counts[0], counts[1]) {
        case (_, 0): return .atOrAfter
        case (0, _): return .behind
        default: return .elsewhere
        }
    }

    /// Of the record files `names` of `table`, those `HEAD` has.
    func committed(table: String, names: [String]) throws -> Set<String> {
        guard let tree = trees[table] else { return [] }
        return try listed(in: tree, names: names)
    }

    /// Of the record files `names` of `table`, those the fork point had: the last commit both `HEAD` and the last
    /// sync's commit descend from. When `HEAD` is elsewhere (another branch), a file the fork point had and `HEAD`
    /// lacks was removed by this branch's own history (a committed `git rm`, a merge it made), which is a delete; one
    /// the fork point lacked was created on the other side since, which this branch merely lacks.
    func atForkPoint(table: String, names: [String]) throws -> Set<String> {
        guard position == .elsewhere, let head, let synced = state.syncedHead, !names.isEmpty else { return [] }
        let base = try repository.run(["merge-base", head, synced], allowing: [1]).text
        guard GitObjectName.isValid(base) else { return [] }
        let tree = try repository.run(["rev-parse", "-q", "--verify", "\(base):./tables/\(table)"], allowing: [1, 128])
        guard tree.status == 0, GitObjectName.isValid(tree.text) else { return [] }
        return try listed(in: tree.text, names: names)
    }

    /// Of the file `names`, those the tree `tree` has.
    private func listed(in tree: String, names: [String]) throws -> Set<String> {
        Set(try blobs(in: tree, names: names).keys)
    }

    /// The blob of each of the record files `names` that `table`'s tree in `HEAD` has, by name.
    func blobs(table: String, names: [String]) throws -> [String: String] {
        guard let tree = trees[table] else { return [:] }
        return try blobs(in: tree, names: names)
    }

    /// The blob of each of the file `names` that the tree `tree` has, by name.
    private func blobs(in tree: String, names: [String]) throws -> [String: String] {
        guard !names.isEmpty else { return [:] }
        var found: [String: String] = [:]
        // `ls-tree` of the table's tree with the names as paths; in steps, to keep each command line short.
        let step = 1_000
        for start in stride(from: 0, to: names.count, by: step) {
            let chunk = Array(names[start..<min(start + step, names.count)])
            let answer = try repository.run(["ls-tree", "--full-tree", "-z", tree, "--"] + chunk)
            // Lines `<mode> blob <object>\t<name>`, NUL-separated.
            for line in answer.bytes.split(separator: 0) {
                guard let tab = line.firstIndex(of: UInt8(ascii: "\t")) else { continue }
                let meta = String(decoding: line[line.startIndex..<tab], as: UTF8.self).split(separator: " ")
                guard meta.count == 3, meta[1] == "blob" else { continue }
                found[String(decoding: line[(tab + 1)...], as: UTF8.self)] = String(meta[2])
            }
        }
        return found
    }

    /// Of the record files `names` of `table`, those git left out of the work tree on purpose (the skip-worktree bit
    /// of a sparse checkout, or of `git update-index --skip-worktree`): absent, and no deletes.
    func notCheckedOut(table: String, names: [String]) throws -> Set<String> {
        guard !names.isEmpty else { return [] }
        var skipped = Set<String>()
        let directory = "tables/\(table)/"
        let step = 1_000
        for start in stride(from: 0, to: names.count, by: step) {
            let paths = names[start..<min(start + step, names.count)].map { directory + $0 }
            // Lines `<tag> <path>`, NUL-separated; `S` is the skip-worktree tag.
            let answer = try repository.run(
                ["ls-files", "-t", "-z", "--"] + paths, environment: ["GIT_LITERAL_PATHSPECS": "1"])
            for line in answer.bytes.split(separator: 0) where line.starts(with: Array("S ".utf8)) {
                let path = String(decoding: line.dropFirst(2), as: UTF8.self)
                if path.hasPrefix(directory) { skipped.insert(String(path.dropFirst(directory.count))) }
            }
        }
        return skipped
    }

    /// The files of `table` in `HEAD` that the scan must look for beyond the stat index: every file of the table's
    /// tree when the index was lost (`indexIsEmpty`, unless a purge emptied it) or no tree was reconciled, the files
    /// added since the reconciled tree otherwise; `nil` when the tree did not change since the last push reconciled
    /// it. Of these, the names `keep` picks from their bytes, before any String is made for them: a clone's whole
    /// tree is 100,000 names that are all on disk. When git's index, as read for the scan (`staged`), stages
    /// `HEAD`'s tree, its names are `HEAD`'s, and git is not asked for them again.
    func filesBeyondIndex(
        table: String, indexIsEmpty: Bool, staged: GitIndexFile? = nil,
        keeping keep: (UnsafeBufferPointer<UInt8>) throws -> Bool = { _ in true }
    ) throws -> [String]? {
        guard let tree = trees[table] else { return nil }
        let reconciled = state.trees[table]
        let indexLost = indexIsEmpty && !state.purged.contains(table)
        if reconciled == tree && !indexLost { return nil }
        if let staged, staged.stagedTree == tree, indexLost || reconciled == nil {
            var names: [String] = []
            try staged.forEachName { name in
                if try keep(name) { names.append(String(decoding: name, as: UTF8.self)) }
            }
            return names
        }
        let answer: GitRepository.Output
        if let reconciled, !indexLost {
            answer = try repository.run(
                ["diff-tree", "-z", "-r", "--no-renames", "--diff-filter=A", "--name-only", reconciled, tree],
                allowing: [128])
            guard answer.status == 0 else {
                return try filesBeyondIndex(table: table, indexIsEmpty: true, keeping: keep)
            }
        } else {
            answer = try repository.run(["ls-tree", "--full-tree", "-z", "--name-only", tree])
        }
        // Names, NUL-separated.
        return try answer.bytes.split(separator: 0).compactMap { name in
            try name.withUnsafeBufferPointer { try keep($0) ? String(decoding: $0, as: UTF8.self) : nil }
        }
    }

    /// The `version` each blob's record names, by blob; a blob that is no record with a version is left out.
    func versions(ofBlobs blobs: [String]) throws -> [String: String] {
        var versions: [String: String] = [:]
        for (blob, content) in zip(blobs, try repository.objectContents(blobs)) {
            if let content, let version = (try? JSONParser.parse(content))?[SystemProperty.version]?.stringValue {
                versions[blob] = version
            }
        }
        return versions
    }

    /// The error for an index entry whose version is in its blob (``StatIndex/Entry/versionIsInBlob``) when git
    /// cannot give it: the store is out of git now (`inGit` false), or git lost the object. Nothing is guessed.
    static func versionUnknown(of entry: StatIndex.Entry, table: String, inGit: Bool) -> StoreError {
        .damagedIndex(
            file: ".tablesync/index/\(table)",
            reason: """
                the version \(entry.fileName) was synced at is the one in git's blob \(entry.contentHash), and \
                \(inGit ? "git has no record with a version by that name" : "the store is not in git now")
                """)
    }

    /// What `HEAD` holds in each of the record files `names` of `table`, by name; a file `HEAD` lacks is left out.
    func committedContents(table: String, names: [String]) throws -> [String: [UInt8]] {
        guard let tree = trees[table] else { return [:] }
        var contents: [String: [UInt8]] = [:]
        for (name, content) in zip(names, try repository.objectContents(names.map { "\(tree):\($0)" }))
        where content != nil {
            contents[name] = content
        }
        return contents
    }
}

/// Git's object names as this version of git writes them: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
enum GitObjectName {
    static func isValid(_ text: String) -> Bool {
        (text.utf8.count == 40 || text.utf8.count == 64)
            && text.utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }
}
