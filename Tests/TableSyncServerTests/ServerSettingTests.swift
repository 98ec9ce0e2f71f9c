import Foundation
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// Each server setting is declared once (`ServerSetting.all`); these hold the flags, the configuration file, the
/// precedence between them, the refusals and docs/server.md's table to those declarations, with the built
/// `tablesync-server` where the command line is concerned.
@Suite("Server settings")
struct ServerSettingTests {
    let server = builtProduct("tablesync-server")

    @Test("the file's unknown-key message lists the declared keys, the top level's and the jwt object's")
    func unknownKeyMessage() throws {
        let topLevel = try #require(refusal(#"{"maxFilterGrowht": 3}"#))
        let listed = try #require(topLevel.split(separator: "; use ").last)
        #expect(topLevel.hasPrefix(#"s.json: unknown setting "maxFilterGrowht"; use host, port, database, tables,"#))
        #expect(
            Self.names(in: listed)
                == Set(ServerSetting.all.map { String($0.key.split(separator: ".")[0]) }))
        #expect(Self.names(in: listed).isSuperset(of: ["maxFilterGrowth", "jwt", "batch", "bulkReadPriority"]))
        let nested = try #require(refusal(#"{"jwt": {"key": "x"}}"#))
        #expect(nested.hasPrefix(#"s.json: unknown "jwt" setting "key"; use issuer, audience,"#))
        let jwtKeys = ServerSetting.all.compactMap { $0.key.hasPrefix("jwt.") ? String($0.key.dropFirst(4)) : nil }
        #expect(Self.names(in: nested.split(separator: "; use ").last ?? "") == Set(jwtKeys))
        #expect(jwtKeys.count == 7)
    }

    @Test("docs/server.md's settings table is the one the declarations make")
    func documentedTable() async throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/server.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let begin = "<!-- settings table: made by `tablesync-server --settings-table` -->\n"
        let end = "<!-- end of the settings table -->"
        let start = try #require(text.range(of: begin), "docs/server.md has no settings table")
        let stop = try #require(text.range(of: end, range: start.upperBound..<text.endIndex))
        #expect(String(text[start.upperBound..<stop.lowerBound]) == ServerSetting.markdownTable)
        let row = try #require(
            ServerSetting.markdownTable.split(separator: "\n").first { $0.contains("maxFilterGrowth") })
        #expect(row.hasPrefix("| `--max-filter-growth N` | `maxFilterGrowth` |  | 16 | The most times longer"))
        let printed = try await runProgram(server, ["--settings-table"])
        #expect(printed.status == 0 && printed.stdout == ServerSetting.markdownTable)
    }

    @Test("a flag wins over the file, the file over the default; --table replaces the file's table of its name")
    func precedence() throws {
        let file = try ServerConfigurationFile.parse(
            #"{"maxFilterGrowth": 9, "maxFilterDepth": 7, "tables": ["todo:pageSize=10", "notes"]}"#, path: "s.json")
        let configuration = try ServerSettingSources(
            file: file, flags: ["max-filter-growth": ["5"], "table": ["TODO:pageSize=20"]]
        ).configuration()
        #expect(
            configuration.filterLimits == FilterLimits(maxDepth: 7, maxTerms: FilterLimits().maxTerms, maxGrowth: 5))
        #expect(configuration.tables == [TableOptions(name: "notes"), TableOptions(name: "TODO", pageSize: 20)])
    }

    @Test("the environment variable of a setting wins over the file and loses to the flag")
    func environmentPrecedence() throws {
        let file = try ServerConfigurationFile.parse(#"{"database": "sqlite:file.sqlite"}"#, path: "s.json")
        let environment = ["TABLESYNC_SERVER_DATABASE": "sqlite:environment.sqlite"]
        #expect(try ServerSettingSources(file: file).configuration().database == .sqlite(path: "file.sqlite"))
        #expect(
            try ServerSettingSources(file: file, environment: environment).configuration().database
                == .sqlite(path: "environment.sqlite"))
        #expect(
            try ServerSettingSources(file: file, environment: environment, flags: ["database": ["sqlite:flag.sqlite"]])
                .configuration().database == .sqlite(path: "flag.sqlite"))
    }

    @Test("the secrets' variables count only when no file is named; JWT settings stand only with a key or claims")
    func secretsAndJWT() throws {
        let directory = TemporaryDirectory()
        let tokensFile = directory.file("tokens")
        try Data("from-file\n".utf8).write(to: URL(fileURLWithPath: tokensFile))
        let environment = [
            "TABLESYNC_SERVER_TOKENS": "from-environment",
            "TABLESYNC_SERVER_JWT_KEY": String(repeating: "k", count: 32)
        ]
        let named = try ServerConfigurationFile.parse(#"{"tokensFile": "\#(tokensFile)"}"#, path: "s.json")
        #expect(
            try ServerSettingSources(file: named, environment: environment).configuration().tokens.map(\.secret)
                == ["from-file"])
        let claims = try ServerConfigurationFile.parse(
            #"{"jwt": {"issuer": "https://id.example/", "audience": "api", "leeway": 5}}"#, path: "s.json")
        let configuration = try ServerSettingSources(file: claims, environment: environment).configuration()
        #expect(configuration.tokens.map(\.secret) == ["from-environment"])
        #expect(configuration.jwt?.sharedKey == Array(String(repeating: "k", count: 32).utf8))
        #expect(configuration.jwt?.issuer == "https://id.example/" && configuration.jwt?.leeway == .seconds(5))
        let leewayAlone = try ServerConfigurationFile.parse(#"{"jwt": {"leeway": 5}}"#, path: "s.json")
        #expect(try ServerSettingSources(file: leewayAlone).configuration().jwt == nil)
    }

    @Test("the built server takes a value from both the command line and the file: the flag's, and the file's others")
    func precedenceOfTheBuiltServer() async throws {
        let directory = TemporaryDirectory()
        let config = directory.file("server.json")
        try Data(#"{"maxBatchOperations": 50, "maxChangeWait": 7}"#.utf8).write(to: URL(fileURLWithPath: config))
        let process = try await ServerProcess.start(
            [
                "--config", config, "--max-batch-operations", "70", "--database",
                "sqlite:" + directory.file("server.sqlite")
            ],
            logPath: directory.file("server.log"))
        let port = try #require(Int(process.baseURL.split(separator: ":").last ?? ""))
        let connection = try #require(RawHTTPConnection(port: port))
        await connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let answer = await connection.readAnswer(within: 10)
        #expect(await process.stop() == 0)
        let health = try JSONParser.parse(try #require(answer).body)
        #expect(health["batch"]?["maxOperations"] == 70, "the flag wins over the file")
        #expect(health["changes"]?["maxWaitSeconds"] == 7, "the file wins over the default")
    }

    @Test("--max-filter-growth: refused out of range and when no whole number, by flag and by file, naming each")
    func maxFilterGrowthRefusals() async throws {
        let directory = TemporaryDirectory()
        let database = ["--database", "sqlite:" + directory.file("server.sqlite"), "--port", "0"]
        let config = directory.file("server.json")
        try Data(#"{"maxFilterGrowth": 0}"#.utf8).write(to: URL(fileURLWithPath: config))
        let wrongType = directory.file("wrong.json")
        try Data(#"{"maxFilterGrowth": "many"}"#.utf8).write(to: URL(fileURLWithPath: wrongType))
        for (arguments, sentence) in [
            (["--max-filter-growth", "0"], "--max-filter-growth must be from 1 to 100000, not 0"),
            (["--max-filter-growth", "many"], "--max-filter-growth must be a whole number, not 'many'"),
            (["--config", config], "--max-filter-growth must be from 1 to 100000, not 0"),
            (["--config", wrongType], #"\#(wrongType): "maxFilterGrowth" must be a whole number"#)
        ] {
            let run = try await runProgram(server, database + arguments)
            #expect(run.status == 2, "\(arguments)")
            #expect(run.stderr.contains("tablesync-server: \(sentence)\n"), "\(run.stderr)")
        }
        var configuration = ServerConfiguration(database: .sqlite(path: "s.sqlite"), tables: [TableOptions(name: "t")])
        configuration.filterLimits.maxGrowth = 100_001
        #expect(throws: ConfigurationError("--max-filter-growth must be from 1 to 100000, not 100001")) {
            try configuration.validate()
        }
    }

    @Test("--help lists every setting's flag with its help and default")
    func help() async throws {
        let run = try await runProgram(server, ["--help"])
        #expect(run.status == 0)
        let help = Self.collapsed(run.stdout)
        for setting in ServerSetting.all {
            #expect(help.contains(setting.dashedFlag), "\(setting.flag)")
            #expect(
                help.contains(Self.collapsed("\(setting.help) Default: \(setting.defaultValue).")), "\(setting.flag)")
        }
    }

    /// The message of the refusal of configuration file `text`, or `nil` when it is taken.
    private func refusal(_ text: String) -> String? {
        do {
            _ = try ServerConfigurationFile.parse(text, path: "s.json")
            return nil
        } catch {
            return error.message
        }
    }

    /// The names of a list said as `a, b or c`.
    private static func names(in list: Substring) -> Set<String> {
        Set(list.replacingOccurrences(of: " or ", with: ", ").components(separatedBy: ", "))
    }

    /// `text` with each run of white space made one space, as the help's wrapping leaves it.
    private static func collapsed(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
