import ArgumentParser
import Foundation
import SyncProtocol
import TableSync

/// `tablesync git-setup`: makes git merge the store's files with TableSync's merge driver.
struct GitSetupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-setup",
        abstract:
            """
            Set up git to merge this store's files: .gitattributes lines and the merge driver in the repository's \
            config.
            """,
        discussion: """
            Run once in each clone (git does not copy its config): \
            \(StoreFileMerge.gitAttributeLines.joined(separator: ", ")) \
            in the store's .gitattributes, and merge.\(StoreFileMerge.driverName).driver = tablesync merge-file %O %A \
            %B %P \
            in the repository's .git/config. `init` does both when the store is created inside a git work tree.
            """
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try SyncContext(directory: global.store, mode: .readOnly)
        let root = context.layout.root
        guard let repository = GitRepository.containing(store: root) else {
            throw ValidationError("\(root) is not in a git work tree (git init, or clone the repository, first)")
        }
        let added = try Self.addAttributeLines(storeRoot: root)
        try repository.configureMergeDriver()
        if global.json {
            CommandOutput.printJSON([
                "gitattributesAdded": .array(added.map(JSONValue.string)),
                "mergeDriver": .string(GitRepository.executablePath)
            ])
        } else {
            CommandOutput.printText(
                """
                git merges this store with \(GitRepository.executablePath) \
                merge-file\(added.isEmpty ? "" : "; added to .gitattributes: \(added.joined(separator: ", "))").
                """
            )
        }
    }

    /// Adds to the store's `.gitattributes` the lines it lacks; returns them.
    static func addAttributeLines(storeRoot: String) throws -> [String] {
        let path = storeRoot + "/.gitattributes"
        let existing = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        let present = Set(existing.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        let missing = StoreFileMerge.gitAttributeLines.filter { !present.contains($0) }
        guard !missing.isEmpty else { return [] }
        let separator = existing.isEmpty || existing.hasSuffix("\n") ? "" : "\n"
        try Data((existing + separator + missing.joined(separator: "\n") + "\n").utf8).write(
            to: URL(fileURLWithPath: path), options: .atomic)
        return missing
    }
}
