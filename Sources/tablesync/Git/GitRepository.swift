import Foundation
import TableSync

/// What the command line does with the store's git repository: set up the merge driver (`init`, `git-setup`),
/// check that a commit can be made, and commit the store after a sync (`sync --commit`).
extension GitRepository {
    /// Names the merge driver in this repository's config (`merge.tablesync.driver`).
    ///
    /// The driver runs this executable by the path it has now; where that is gone (the binary moved, an upgrade
    /// installed it elsewhere), the `tablesync` on the `PATH`; where there is none, git's own text merge, which
    /// leaves conflict markers instead of a silent "ours".
    func configureMergeDriver() throws {
        let name = StoreFileMerge.driverName
        try run(["config", "merge.\(name).name", "TableSync: record files and queries.json, property by property"])
        try run(["config", "merge.\(name).driver", Self.driverCommand(executable: Self.executablePath)])
    }

    /// The driver's shell command for git (`%O %A %B %P` are git's placeholders).
    static func driverCommand(executable: String) -> String {
        "t=\(shellQuoted(executable)); [ -x \"$t\" ] || t=$(command -v tablesync) || "
            + "{ git merge-file -L ours -L base -L theirs %A %O %B; exit 1; }; exec \"$t\" merge-file %O %A %B %P"
    }

    /// Why a commit cannot be made here (`git var GIT_COMMITTER_IDENT` fails without an identity), or `nil`.
    func commitIdentityProblem() -> String? {
        guard let answer = try? run(["var", "GIT_COMMITTER_IDENT"], allowing: [128]), answer.status != 0 else {
            return nil
        }
        return
            """
            git has no identity to commit with (\(answer.errors.split(separator: "\n").last ?? "")); set one for this \
            repository: git config user.name …; git config user.email … (under cron, HOME may not be the one with your \
            ~/.gitconfig)
            """
    }

    /// Commits the store's own `paths` (relative to the store) as they are in the work tree, without the files in
    /// `excluding` (files the sync could not read, leftovers: the parent's copies, if any, are committed instead),
    /// with the message `message` makes of the paths the commit changes (relative to the store); takes the
    /// machine-local cache out of git if it was ever committed. Anything else staged stays staged and uncommitted.
    /// Returns the commit's message, or `nil` when there was nothing to commit.
    ///
    /// The commit is built in an index of its own (`read-tree HEAD`, `add`, `write-tree`, `commit-tree`,
    /// `update-ref`), then the real index takes the committed paths from it: a `git commit` of paths would put a
    /// cache that git tracks back, and stage whatever else is staged in the store.
    func commitStore(paths: [String], excluding: [String], message: ([String]) -> String) throws -> String? {
        let head = try run(["rev-parse", "-q", "--verify", "HEAD"], allowing: [1]).text
        let parent = head.isEmpty ? nil : head
        let index = FileManager.default.temporaryDirectory.path + "/tablesync-index-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: index) }
        let own = ["GIT_INDEX_FILE": index]
        try run(parent.map { ["read-tree", $0] } ?? ["read-tree", "--empty"], environment: own)
        let existing = paths.filter { FileManager.default.fileExists(atPath: storeRoot + "/" + $0) }
        if !existing.isEmpty { try run(["add", "--all", "--"] + existing, environment: own) }
        if !excluding.isEmpty {
            // Each left-out path goes back to what the parent has (or out of the commit); literally, whatever
            // characters its name holds, and whether or not git ignores it.
            let literal = own.merging(["GIT_LITERAL_PATHSPECS": "1"]) { $1 }
            let restore = parent.map { ["reset", "-q", $0, "--"] } ?? ["rm", "-q", "--cached", "--ignore-unmatch", "--"]
            try run(restore + excluding, environment: literal)
        }
        try run(
            ["rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", StoreLayout.cacheDirectoryName], environment: own)
        let tree = try run(["write-tree"], environment: own).text
        if let parent, try run(["rev-parse", parent + "^{tree}"]).text == tree { return nil }
        let changed = try run(
            parent.map { ["diff-tree", "-r", "-z", "--name-only", "--relative", $0, tree] }
                ?? ["ls-tree", "-r", "-z", "--name-only", tree])
        let text = message(changed.bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) })
        let commit = try run(["commit-tree", tree] + (parent.map { ["-p", $0] } ?? []) + ["-m", text]).text
        try run(
            [
                "update-ref", "-m", "tablesync: " + (text.split(separator: "\n").first.map(String.init) ?? ""),
                "HEAD", commit
            ]
                + (parent.map { [$0] } ?? []))
        try run(["reset", "-q", "--"] + existing + [StoreLayout.cacheDirectoryName])
        return text
    }

    /// This program's own path, for git to run as the merge driver.
    static var executablePath: String {
        Bundle.main.executablePath.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path } ?? "tablesync"
    }

    /// `text` as one word for the shell that git runs the driver with.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
