import ArgumentParser
import CBuildStamp
import Foundation
import Logging
import SyncProtocol
import TableSyncServer

/// `tablesync-server`: serves tables over the Azure Mobile Apps table protocol (v2 and v3).
@main
struct TableSyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tablesync-server",
        abstract: "Serve tables over the Azure Mobile Apps table protocol (v2 and v3), on SQLite or PostgreSQL.",
        discussion: """
            Tokens come from --tokens-file FILE (one per line) or the environment variable TABLESYNC_SERVER_TOKENS \
            (comma- or space-separated), never from a flag; a line TOKEN NAME names its token for the log and per-user \
            tables. JWTs are checked with --jwt-jwks or --jwt-hs256-key-file, --jwt-issuer and --jwt-audience. Without \
            tokens or JWT keys the server listens on loopback only.
            Stop it with SIGINT or SIGTERM; it finishes the requests in flight first.
            With no --database it keeps its records in tablesync-server.sqlite in the working directory; with no \
            --table it serves TodoItem, the table of the Azure Mobile Apps quickstart. The log says both.
            Example: tablesync-server --database sqlite:server.sqlite --table todo --table notes:softDelete=false \
            --table 'tasks:columns=text:string;done:boolean;due:date;rank:number'
            """,
        version: TableSyncVersion.line(
            stampedVersion: String(cString: tablesync_build_version()),
            commit: String(cString: tablesync_build_commit())))

    @OptionGroup
    var settings: SettingFlags

    @Option(help: "A JSON configuration file; flags and the settings' environment variables win over it.")
    var config: String?

    @Option(
        name: .customLong("log-level"),
        help: "trace, debug, info, notice, warning, error or critical (in any case); another word is refused.")
    var logLevel: String = "info"

    /// `--settings-table`: print the settings as the markdown table of docs/server.md and exit.
    @Flag(help: .hidden)
    var settingsTable = false

    /// Parses and runs the command line; bad usage (an unknown flag, a value it does not take) exits 2, as every
    /// other refusal of the configuration does, where the argument parser's own code is 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                exit(withError: ExitCode(2))
            }
            exit(withError: error)
        }
    }

    func validate() throws {
        guard Logger.Level(rawValue: logLevel.lowercased()) != nil else {
            throw ValidationError(
                """
                --log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")); found \
                "\(logLevel)"
                """)
        }
    }

    func run() async throws {
        if settingsTable {
            print(ServerSetting.markdownTable, terminator: "")
            return
        }
        var logger = Logger(label: "tablesync-server")
        logger.logLevel = Logger.Level(rawValue: logLevel.lowercased()) ?? .info
        ServerHeapPolicy.apply()
        do {
            let configuration = try makeConfiguration(logger: logger)
            let app = try makeServerApplication(configuration: configuration, logger: logger)
            try await runServer(app, configuration: configuration, logger: logger)
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("tablesync-server: \(error.message)\n".utf8))
            throw ExitCode(2)
        }
    }

    /// The configuration of the file, the environment and the flags; the log says which defaults stand in for a
    /// database and tables that none of them names.
    private func makeConfiguration(logger: Logger) throws(ConfigurationError) -> ServerConfiguration {
        let sources = ServerSettingSources(
            file: try config.map { path throws(ConfigurationError) in try ServerConfigurationFile.read(path: path) }
                ?? ServerConfigurationFile(),
            environment: ProcessInfo.processInfo.environment, flags: settings.given)
        let configuration = try sources.configuration()
        if !sources.gives("database"), case .sqlite(let path) = configuration.database {
            logger.notice(
                "no --database given: keeping the records in SQLite",
                metadata: ["file": "\(FileManager.default.currentDirectoryPath)/\(path)"])
        }
        if !sources.gives("tables") {
            logger.notice(
                "no --table given: serving the quickstart's table",
                metadata: ["table": "\(ServerSettingSources.defaultTable)"])
        }
        return configuration
    }
}
