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
            Set up git to merge this store's files: .gitattributes and .gitignore lines and the merge driver in the \
            repository's config.
            """,
        discussion: """
            Run once in each clone (git does not copy its config): \
            \(StoreFileMerge.gitAttributeLines.joined(separator: ", ")) \
            in the store's .gitattributes, the leftovers of editors and merge tools (r.json~, r.json.orig, #r.json#, \
            4913, …) in its .gitignore, and merge.\(StoreFileMerge.driverName).driver = tablesync merge-file %O %A \
            %B %P \
            in the repository's .git/config. `init` does both when the store is created inside a git work tree.
            """
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, mode: .readOnly)
        let root = context.layout.root
        guard let repository = GitRepository.containing(store: root) else {
            throw ValidationError("\(root) is not in a git work tree (git init, or clone the repository, first)")
        }
        let added = try StoreGitFiles.addMissingLines(storeRoot: root)
        try repository.configureMergeDriver()
        if global.json {
            var addedJSON: [String: JSONValue] = [:]
            for (file, lines) in added { addedJSON[file] = .array(lines.map(JSONValue.string)) }
            CommandOutput.printJSON([
                "gitattributesAdded": .array(
                    (added.first { $0.file == StoreLayout.attributesFileName }?.lines ?? []).map(JSONValue.string)),
                "linesAdded": .object(addedJSON),
                "mergeDriver": .string(GitRepository.executablePath)
            ])
        } else {
            let addedText = added.map { "added to \($0.file): \($0.lines.joined(separator: ", "))" }
            CommandOutput.printText(
                "git merges this store with \(GitRepository.executablePath) merge-file"
                    + (addedText.isEmpty ? "." : "; " + addedText.joined(separator: "; ") + "."))
        }
    }
}
