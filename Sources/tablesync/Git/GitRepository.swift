import Foundation
import TableSync

/// The git work tree a store lives in, driven through the `git` program: what `git-setup` and `sync --commit`
/// need, and nothing else.
struct GitRepository {
    /// The store's directory; every command runs there (`git -C`), so paths are the store's own.
    let storeRoot: String

    /// A failed `git` command, with what git said.
    struct Failure: Error, CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var message: String
        var description: String {
            "git \(arguments.joined(separator: " ")) failed (exit \(status))\(message.isEmpty ? "" : ": \(message)")"
        }
    }

    /// The repository of the store, or `nil` when the store is not in a git work tree (or git is not installed).
    static func containing(store root: String) -> GitRepository? {
        let repository = GitRepository(storeRoot: root)
        guard let answer = try? repository.run(["rev-parse", "--is-inside-work-tree"]), answer.output == "true" else { return nil }
        return repository
    }

    /// Names the merge driver in this repository's config (`merge.tablesync.driver`), running this executable.
    func configureMergeDriver() throws {
        let name = StoreFileMerge.driverName
        _ = try run(["config", "merge.\(name).name", "TableSync: record files and queries.json, property by property"])
        _ = try run(["config", "merge.\(name).driver", "\(Self.shellQuoted(Self.executablePath)) merge-file %O %A %B %P"])
    }

    /// Whether this repository's config names the merge driver.
    var hasMergeDriver: Bool {
        (try? run(["config", "--get", "merge.\(StoreFileMerge.driverName).driver"]))?.output.isEmpty == false
    }

    /// Commits the store's own `paths` (relative to the store, those that exist) as they are in the work tree,
    /// with `message`, leaving anything else staged as it was. Returns `false` when they have nothing to commit.
    func commit(paths: [String], message: String) throws -> Bool {
        let existing = paths.filter { FileManager.default.fileExists(atPath: storeRoot + "/" + $0) }
        guard !existing.isEmpty else { return false }
        _ = try run(["add", "--all", "--"] + existing)
        let changed = try run(["diff", "--cached", "--quiet", "--"] + existing, allowing: [1])
        guard changed.status == 1 else { return false }
        _ = try run(["commit", "--quiet", "--no-verify", "-m", message, "--only", "--"] + existing)
        return true
    }

    /// Runs `git -C <store> arguments`; a status other than 0 (or one of `allowing`) throws with git's message.
    @discardableResult
    private func run(_ arguments: [String], allowing: Set<Int32> = []) throws -> (output: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", storeRoot] + arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outputBytes = output.fileHandleForReading.readDataToEndOfFile()
        let errorBytes = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: outputBytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0 || allowing.contains(process.terminationStatus) else {
            throw Failure(arguments: arguments, status: process.terminationStatus,
                          message: String(decoding: errorBytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return (text, process.terminationStatus)
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
