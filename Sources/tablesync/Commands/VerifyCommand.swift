import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync verify`.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check the store's invariants and say what is wrong.",
        discussion:
            """
            Checks settings, queries, the journal against the record files, every record file (valid JSON object, \
            canonical form, named after its id) and leftovers of interrupted runs, and lists what it finds by path. \
            Reads without the lock and changes nothing, so it runs on a store you cannot write, and beside a running \
            sync (whose temporary files it may list as notices). Exits 7 when it finds an error; notices alone exit 0.
            """
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, mode: .readOnly)
        let findings = try await context.verify()
        let errors = findings.filter { $0.severity == .error }
        if global.json {
            CommandOutput.printJSON([
                "ok": .bool(errors.isEmpty),
                "findings": .array(
                    findings.map {
                        [
                            "severity": .string($0.severity.rawValue), "file": .string($0.path),
                            "message": .string($0.message)
                        ]
                    })
            ])
        } else if findings.isEmpty {
            CommandOutput.printText("The store is consistent.")
        } else {
            for finding in findings { CommandOutput.printText("\(finding.severity.rawValue): \(finding)") }
            CommandOutput.printText(
                errors.isEmpty ? "No errors; the notices settle on the next run." : "\(errors.count) error(s).")
        }
        if !errors.isEmpty { throw ExitCode(.invalidStore) }
    }
}
