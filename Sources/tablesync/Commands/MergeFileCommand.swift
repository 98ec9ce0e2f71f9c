import ArgumentParser
import Foundation
import TableSync

/// `tablesync merge-file`: git's merge driver for a store's record files and `queries.json`.
struct MergeFileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge-file",
        abstract: "Git's merge driver for a store's files (git runs it as: tablesync merge-file %O %A %B %P).",
        discussion: """
            Merges OURS with THEIRS from BASE and writes the result over OURS, as git expects. Record files merge \
            property by property (system properties from the newer server copy); queries.json keeps every query \
            and, for each, the older watermark. What both sides changed differently is left between conflict \
            markers and the exit status is 1; tablesync status shows both sides. Set up by `tablesync git-setup`.
            """
    )

    @Argument(help: "The common ancestor's version of the file (git's %O).") var base: String
    @Argument(help: "Our version, overwritten with the result (git's %A).") var ours: String
    @Argument(help: "Their version (git's %B).") var theirs: String
    @Argument(help: "The file's path in the repository (git's %P).") var path: String

    func run() async throws {
        func read(_ file: String) throws -> [UInt8] {
            do {
                return Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            } catch {
                throw ValidationError("cannot read \(file): \(error.localizedDescription)")
            }
        }
        let result = StoreFileMerge.merge(
            path: path, base: try read(base), ours: try read(ours), theirs: try read(theirs))
        try Data(result.bytes).write(to: URL(fileURLWithPath: ours))
        if let refusal = result.refusal {
            CommandOutput.printError("tablesync merge-file: \(path): \(refusal)")
            throw ExitCode(1)
        }
        if !result.conflicts.isEmpty {
            CommandOutput.printError(
                """
                tablesync merge-file: \(path): both sides changed \(result.conflicts.joined(separator: ", ")); left \
                between conflict markers
                """
            )
            throw ExitCode(1)
        }
    }
}
