import ArgumentParser
import SyncProtocol
import TableSync

/// `tablesync conflicts`.
struct ConflictsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts",
        abstract: "List the operations the server refused or the store held back, with both sides.",
        discussion:
            """
            Each shows what differs, the server's copy (-) against the local one (+); --json has both copies whole. \
            Settle each with `tablesync resolve TABLE/ID --keep-local|--take-server|--discard`. Exits 3 when any wait.
            """
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try await SyncContext.open(directory: global.store, mode: .readOnly)
        let conflicts = try await context.conflicts()
        if global.json {
            CommandOutput.printJSON([
                "conflicts": .array(
                    conflicts.map { conflict in
                        [
                            "record": .string(conflict.key.description),
                            "operation": .string(conflict.operation.kind.rawValue),
                            "status": conflict.status.map { .integer(Int64($0)) } ?? .null,
                            "reason": .string(conflict.reason),
                            "local": conflict.local.map { .object($0) } ?? .null,
                            "server": conflict.server.map { .object($0) } ?? .null
                        ]
                    })
            ])
        } else if conflicts.isEmpty {
            CommandOutput.printText("No conflicts.")
        } else {
            for conflict in conflicts {
                CommandOutput.printText(ConflictText.lines(for: conflict).joined(separator: "\n"))
            }
        }
        if !conflicts.isEmpty { throw ExitCode(.conflictsWaiting) }
    }
}
