import ArgumentParser
import CBuildStamp
import SyncProtocol
import TableSync

/// `tablesync`: the command line for people and cron.
@main
struct TableSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tablesync",
        abstract: "Keep a directory of JSON record files in sync with an Azure Mobile Apps table server.",
        discussion: """
            The store is a directory you can keep in git: tables/<Table>/<id>.json holds one record per file, \
            journal.jsonl the changes waiting to be pushed, queries.json the pull queries and their watermarks.
            Edit record files by hand or with insert/update/delete; push and sync send the changes.
            -C STORE and --json go before or after the subcommand. From cron:
              */5 * * * * tablesync -C /srv/store sync >>/var/log/tablesync.log 2>&1

            Exit codes (for scripts and cron):
              0  done
              1  failure not covered below
              2  bad usage (arguments, unknown table, invalid JSON given), or the
                 server refuses the requests themselves (a table it does not serve,
                 a protocol version it does not speak)
              3  done, but conflicts are waiting (see `tablesync conflicts`)
              4  server unreachable, timed out or answering garbage: retry later,
                 nothing was lost
              5  the server refused the credentials (TABLESYNC_TOKEN, tokenFile,
                 tokenCommand), or no token could be had
              6  another run holds the store's lock: retry later
              7  the store has invalid files or state (see `tablesync verify`)
              8  done, but server records the store cannot hold were skipped
                 (see `tablesync status`)
              9  git's state stops the run before anything is sent: a merge,
                 rebase, cherry-pick or revert under way, or HEAD behind the
                 commit of the last sync (--allow-older-head)
             10  sync --commit: the sync is done, but its commit could not be
                 made (no git identity, ...); commit by hand
            With --json every outcome, errors included, is one JSON document on
            standard output; an error is {"error": "...", "exitCode": N}.
            """,
        version: TableSyncVersion.line(
            stampedVersion: String(cString: tablesync_build_version()),
            commit: String(cString: tablesync_build_commit())),
        subcommands: [
            InitCommand.self, StatusCommand.self, LogCommand.self, VerifyCommand.self,
            InsertCommand.self, UpdateCommand.self, DeleteCommand.self, QueryCommand.self,
            PushCommand.self, PullCommand.self, SyncCommand.self, WatchCommand.self, PurgeCommand.self,
            ConflictsCommand.self,
            ResolveCommand.self, RestoreCommand.self, RevertCommand.self,
            TakeOverCommand.self, GitSetupCommand.self, MergeFileCommand.self
        ]
    )

    @OptionGroup var global: GlobalOptions

    /// Parses and runs the command line; any error, in the arguments or in the run, is printed by
    /// ``CommandOutput/exit(with:json:)`` with TableSync's exit code.
    static func main() async {
        ProcessMemory.applyCommandLinePolicy()
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            CommandOutput.exit(with: error, json: GlobalOptions.asksForJSON(arguments))
        }
    }
}
