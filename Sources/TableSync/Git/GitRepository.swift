import Foundation

/// The git work tree a store lives in, driven through the `git` program: what the store needs to know of its
/// history (``GitBaseline``), to stay safe under git commands (``GitGuard``), to merge (`git-setup`) and to commit
/// (`sync --commit`).
///
/// Every command runs in the store's directory (`git -C <store>`), so paths are the store's own
/// (`tables/todo/a1.json`, `HEAD:./tables/todo`), wherever the store sits in the repository.
package struct GitRepository: Sendable {
    /// The store's directory.
    package let storeRoot: String
    /// The repository's git directory, absolute (per work tree: a linked work tree has its own).
    package let gitDirectory: String
    /// The directory the work trees of the repository share (its config, its objects), absolute.
    package let commonDirectory: String
    /// The hash that names the repository's objects: `sha1` or `sha256`.
    package var objectFormat = "sha1"
    /// The store's directory relative to the work tree's root, with a trailing `/` (empty at the root).
    package var storePrefix = ""

    /// A `git` command that failed, with what git said.
    package struct Failure: Error, CustomStringConvertible {
        package var arguments: [String]
        package var status: Int32
        package var message: String
        package var description: String {
            "git \(arguments.joined(separator: " ")) failed (exit \(status))\(message.isEmpty ? "" : ": \(message)")"
        }
    }

    /// What one `git` command printed, and how it exited.
    package struct Output: Sendable {
        package var bytes: [UInt8]
        package var status: Int32
        package var errors: String
        /// Standard output as text, without the final line end.
        package var text: String {
            String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// The repository whose work tree holds the store at `root`, or `nil` when there is none (or git is not installed).
    package static func containing(store root: String) -> GitRepository? {
        locate(store: root)?.repository
    }

    /// ``containing(store:)``, with `revisions` (`git rev-parse` arguments such as `HEAD`) answered by the same
    /// command: each an object name, or `nil` when git has none by that name.
    package static func locate(
        store root: String, revisions: [String] = []
    ) -> (repository: GitRepository, revisions: [String?])? {
        let probe = GitRepository(storeRoot: root, gitDirectory: "", commonDirectory: "")
        let asked = [
            "--is-inside-work-tree", "--absolute-git-dir", "--path-format=absolute", "--git-common-dir",
            "--show-object-format", "--show-prefix"
        ]
        // A revision git does not know ends the answers there; what came before still stands. The prefix is an
        // empty line at the work tree's root.
        guard let answer = try? probe.run(["rev-parse"] + asked + revisions, allowing: [128]) else { return nil }
        let lines = String(decoding: answer.bytes, as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false
        ).map(String.init)
        guard lines.count >= 5, lines[0] == "true" else { return nil }
        let named = revisions.indices.map { index -> String? in
            let line = 5 + index
            return line < lines.count && GitObjectName.isValid(lines[line]) ? lines[line] : nil
        }
        var repository = GitRepository(storeRoot: root, gitDirectory: lines[1], commonDirectory: lines[2])
        repository.objectFormat = lines[3]
        repository.storePrefix = lines[4]
        return (repository, named)
    }

    /// Runs `git -C <store> arguments`, with `input` on its standard input and `environment` added to this
    /// process's own; a status other than 0 (or one of `allowing`) throws ``Failure`` with git's message. Automatic
    /// `gc` and maintenance stay off: a store's
    /// commands must not start minutes of repacking behind a cron job.
    @discardableResult
    package func run(
        _ arguments: [String], input: [UInt8]? = nil, environment: [String: String] = [:],
        allowing: Set<Int32> = []
    ) throws -> Output {
        guard let program = Self.program else {
            throw Failure(arguments: arguments, status: -1, message: "git is not installed (no git on the PATH)")
        }
        let run: Subprocess.Result
        do {
            run = try Subprocess.run(
                program, ["-C", storeRoot, "-c", "gc.auto=0", "-c", "maintenance.auto=false"] + arguments,
                environment: environment.isEmpty
                    ? nil : ProcessInfo.processInfo.environment.merging(environment) { _, added in added },
                input: input.map { .bytes($0) } ?? .nothing)
        } catch {
            throw Failure(arguments: arguments, status: -1, message: error.description)
        }
        let result = Output(
            bytes: run.output, status: run.killed ? 128 + run.status : run.status,
            errors: String(decoding: run.errors, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        guard result.status == 0 || allowing.contains(result.status) else {
            throw Failure(arguments: arguments, status: result.status, message: result.errors)
        }
        return result
    }

    /// The content of each object `names` names (`git cat-file --batch`), in their order; `nil` for one git lacks.
    package func objectContents(_ names: [String]) throws -> [[UInt8]?] {
        guard !names.isEmpty else { return [] }
        let answer = try run(
            ["cat-file", "--batch"], input: Array((names.joined(separator: "\n") + "\n").utf8))
        var contents: [[UInt8]?] = []
        var position = answer.bytes.startIndex
        let bytes = answer.bytes
        // Each object: `<name> <type> <size>\n<content>\n`; one git lacks: `<name> missing\n`.
        while contents.count < names.count, let lineEnd = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) {
            let header = String(decoding: bytes[position..<lineEnd], as: UTF8.self).split(separator: " ")
            position = lineEnd + 1
            guard header.count == 3, let size = Int(header[2]) else {
                contents.append(nil)
                continue
            }
            contents.append(Array(bytes[position..<min(position + size, bytes.count)]))
            position = min(position + size + 1, bytes.count)
        }
        return contents
    }

    /// The `git` program on the `PATH`, looked up once.
    private static let program: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { String($0) + "/git" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }()

    /// The git operation under way in this work tree (a merge, rebase, cherry-pick or revert), or unmerged store
    /// files, in words; `nil` when there is none.
    package func operationInProgress(checkingUnmergedFiles: Bool = true) throws -> String? {
        if let writing = workTreeBeingWritten() { return writing }
        let markers = [
            ("MERGE_HEAD", "a git merge"), ("CHERRY_PICK_HEAD", "a git cherry-pick"), ("REVERT_HEAD", "a git revert"),
            ("rebase-merge", "a git rebase"), ("rebase-apply", "a git rebase or am")
        ]
        for (file, operation) in markers where FileManager.default.fileExists(atPath: gitFile(file)) {
            return "\(operation) is under way in the store's work tree: finish it (or abort it) first"
        }
        // A `git stash pop` that stopped at a conflict leaves unmerged files and no marker.
        guard checkingUnmergedFiles else { return nil }
        let unmerged = try run(["ls-files", "-u", "-z", "--", "."]).bytes.split(separator: 0)
            .compactMap { line in
                line.firstIndex(of: UInt8(ascii: "\t")).map { String(decoding: line[($0 + 1)...], as: UTF8.self) }
            }
        guard let first = unmerged.first else { return nil }
        return
            """
            \(Set(unmerged).count) file(s) of the store are unmerged, \(first) \
            first: settle them and git add them first
            """
    }

    /// In words, that a git command is writing the index and the work tree right now (a checkout, a reset, a switch
    /// that is still removing and writing files holds `index.lock` until it ends); `nil` when none is. Files it has
    /// not written yet, or removed on its way, are nobody's edit or delete.
    package func workTreeBeingWritten() -> String? {
        guard FileManager.default.fileExists(atPath: gitFile("index.lock")) else { return nil }
        return
            """
            a git command is writing the store's work tree (\(gitFile("index.lock")) exists): run again once it ends; \
            if no git command is running, a crashed one left the lock behind: remove it
            """
    }

    /// Whether a `git bisect` is under way (it checks out commits of history one after the other).
    package var isBisecting: Bool { FileManager.default.fileExists(atPath: gitFile("BISECT_LOG")) }

    /// Whether merges of the store go through TableSync's merge driver: the repository's config names it, and the
    /// store's `.gitattributes` has every line (``StoreFileMerge/gitAttributeLines``). The config file is read, not
    /// asked of git: a driver named only in a global or included config reads as missing.
    package var mergesStore: Bool {
        guard let config = try? String(contentsOfFile: commonDirectory + "/config", encoding: .utf8),
            let attributes = try? String(contentsOfFile: storeRoot + "/.gitattributes", encoding: .utf8)
        else { return false }
        var inDriverSection = false
        var named = false
        for line in config.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("[") { inDriverSection = line == "[merge \"\(StoreFileMerge.driverName)\"]" }
            if inDriverSection && line.hasPrefix("driver") { named = true }
        }
        return named && StoreGitFiles.missingLines(StoreGitFiles.attributeLines, in: attributes).isEmpty
    }

    /// The file `name` in the git directory (`MERGE_HEAD`, `rebase-merge`, …).
    package func gitFile(_ name: String) -> String { gitDirectory + "/" + name }
}
