import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

@Suite("Server configuration")
struct ConfigurationTests {
    @Test("--table options")
    func tableOptions() throws {
        let options = try TableOptions.parse("todo:pageSize=100,maxTop=1000,softDelete=false")
        #expect(options == TableOptions(name: "todo", softDelete: false, pageSize: 100, maxTop: 1000))
        #expect(try TableOptions.parse("notes") == TableOptions(name: "notes"))
        #expect(throws: ConfigurationError.self) { try TableOptions.parse("bad/name") }
        #expect(throws: ConfigurationError.self) { try TableOptions.parse("todo:colour=red") }
        #expect(throws: ConfigurationError.self) { try TableOptions.parse("todo:pageSize=0") }
    }

    @Test("--table declares columns with columns=name:type;…")
    func declaredColumns() throws {
        let options = try TableOptions.parse(
            "todo:pageSize=10,columns=text:string;done:boolean;due:date;rank:number,softDelete=false")
        #expect(options.schema?.text == "done:boolean;due:date;rank:number;text:string")
        #expect(options.pageSize == 10 && !options.softDelete)
        #expect(try TableOptions.parse("todo").schema == nil)
        #expect(
            throws: ConfigurationError(
                """
                --table todo:columns=rank:int: columns: the column 'rank' has the unknown type 'int'; use string, \
                number, boolean, date, dateonly
                """
            )
        ) {
            try TableOptions.parse("todo:columns=rank:int")
        }
        #expect(
            throws: ConfigurationError(
                """
                --table todo:columns=id:string: columns: 'id' is a system property; the server manages it and it \
                cannot be declared
                """
            )
        ) {
            try TableOptions.parse("todo:columns=id:string")
        }
    }

    @Test("database locations")
    func databases() throws {
        #expect(try DatabaseLocation.parse("sqlite:server.sqlite") == .sqlite(path: "server.sqlite"))
        #expect(
            try DatabaseLocation.parse("postgres://me:p%40ss@db.local:6543/sync")
                == .postgres(
                    PostgresLocation(host: "db.local", port: 6543, username: "me", password: "p@ss", database: "sync")))
        #expect(
            try DatabaseLocation.parse("postgres://me@127.0.0.1/sync")
                == .postgres(PostgresLocation(host: "127.0.0.1", username: "me", database: "sync")))
        #expect(throws: ConfigurationError.self) { try DatabaseLocation.parse("mysql://x@y/z") }
        #expect(throws: ConfigurationError.self) { try DatabaseLocation.parse("postgres://host/db") }
        #expect("\(try DatabaseLocation.parse("postgres://me:secret@h/d"))".contains("secret") == false)
    }

    @Test("no tokens → loopback only; tokens allow other addresses")
    func loopbackRule() throws {
        let tables = [TableOptions(name: "todo")]
        for host in ["127.0.0.1", "localhost", "::1", "127.1.2.3"] {
            try ServerConfiguration(host: host, database: .sqlite(path: "x"), tables: tables).validate()
        }
        #expect {
            try ServerConfiguration(host: "0.0.0.0", database: .sqlite(path: "x"), tables: tables).validate()
        } throws: { error in
            "\(error)".contains("without authentication")
        }
        try ServerConfiguration(host: "0.0.0.0", database: .sqlite(path: "x"), tables: tables, tokens: ["t"]).validate()
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(database: .sqlite(path: "x"), tables: []).validate()
        }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration(database: .sqlite(path: "x"), tables: tables + [TableOptions(name: "TODO")])
                .validate()
        }
    }

    @Test("tokens from a file (TOKEN or TOKEN NAME per line, as before names) or the environment")
    func tokens() throws {
        let tokens = try TokenList.parse(fileContents: "# comment\n a1 \n\nb2\tphone-of-ann\r\n")
        #expect(tokens.map(\.secret) == ["a1", "b2"])
        #expect(tokens.map(\.name) == ["token (line 2)", "phone-of-ann"])
        #expect(tokens.map(\.givenName) == [nil, "phone-of-ann"], "only a named token stands for a user")
        #expect(TokenList.parse(environmentValue: "a1, b2 c3").map(\.secret) == ["a1", "b2", "c3"])
        for (text, problem) in [
            ("t1 a b\n", "3 words"), ("t1 na/me\n", "a token's name"), ("t1 ann\nt2 ann\n", "given twice")
        ] {
            #expect { try TokenList.parse(fileContents: text) } throws: { "\($0)".contains(problem) }
        }
    }

    @Test("access rules and per-user tables: options, the file's object form, and the rules a server starts with")
    func accessOptions() throws {
        let table = try TableOptions.parse("todo:perUser=true,read=authenticated,write=role:editor")
        #expect(table.perUser && table.read == .authenticated && table.write == .role("editor"))
        #expect(throws: ConfigurationError.self) { try TableOptions.parse("todo:read=everyone") }
        let file = try configured(
            #"{"tables": [{"name": "notes", "read": "anonymous", "write": "disabled", "perUser": false}]}"#)
        #expect(file.tables.first?.read == .anonymous && file.tables.first?.write == .disabled)
        func refusal(_ tables: [TableOptions], tokens: [StaticToken] = []) -> String? {
            do {
                try ServerConfiguration(database: .sqlite(path: "x"), tables: tables, tokens: tokens).validate()
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(
            refusal([table])?.contains("perUser needs users") == true
                || refusal([table])?.contains("needs credentials") == true)
        #expect(refusal([table], tokens: ["t"]) == nil)
        #expect(
            refusal([try TableOptions.parse("todo:perUser=true,read=anonymous")], tokens: ["t"])?.contains(
                "not read=anonymous") == true)
        #expect(
            refusal([try TableOptions.parse("todo:perUser=true,columns=text:string")], tokens: ["t"])?.contains(
                "cannot be combined") == true)
        #expect(refusal([try TableOptions.parse("todo:read=authenticated")])?.contains("needs credentials") == true)
    }

    @Test("JWT settings: the file's jwt object, and the keys, claims and URLs a server starts with")
    func jwtSettings() throws {
        let file = try configured(
            #"""
            {"jwt": {"issuer": "https://id.example/", "audience": "api", "jwks": "https://id.example/keys", \#
            "leeway": 30, "roleClaim": "groups"}}
            """#)
        #expect(
            file.jwt?.issuer == "https://id.example/" && file.jwt?.keySet == .url("https://id.example/keys")
                && file.jwt?.leeway == .seconds(30) && file.jwt?.roleClaim == "groups")
        #expect(throws: ConfigurationError.self) {
            try ServerConfigurationFile.parse(#"{"jwt": {"key": "x"}}"#, path: "s.json")
        }
        var settings = JWTSettings(keySet: .url("http://id.example/keys"), issuer: "i", audience: "a")
        #expect { try settings.validate() } throws: { "\($0)".contains("https://") }
        settings.keySet = JWTSettings.KeySetLocation(parsing: "http://127.0.0.1:9/keys")
        try settings.validate()
        settings.keySet = nil
        settings.sharedKey = Array("short".utf8)
        #expect { try settings.validate() } throws: { "\($0)".contains("at least 32 bytes") }
        settings.sharedKey = JWTSettings.sharedKey(fileContents: String(repeating: "k", count: 32) + "\n")
        try settings.validate()
        settings.issuer = ""
        #expect { try settings.validate() } throws: { "\($0)".contains("issuer and an audience") }
    }

    @Test("configuration file")
    func file() throws {
        let file = try configured(
            """
            {"host": "127.0.0.1", "port": 9000, "database": "sqlite:s.sqlite",
             "tables": ["todo:pageSize=10", {"name": "notes", "softDelete": false}], "maxBodySize": 2048}
            """)
        #expect(file.port == 9000)
        #expect(
            file.tables == [TableOptions(name: "todo", pageSize: 10), TableOptions(name: "notes", softDelete: false)])
        #expect(throws: ConfigurationError.self) {
            try ServerConfigurationFile.parse(#"{"tokens": ["x"]}"#, path: "s.json")
        }
        #expect(try configured(#"{"postgresPoolSize": 4}"#).postgresPoolSize == 4)
    }

    @Test("the start's wait for PostgreSQL: 30 s unless the file or the flag says, from 0 (none) to a day")
    func databaseWait() throws {
        #expect(try configured(#"{"databaseWait": 0}"#).databaseWait == .zero)
        #expect(throws: ConfigurationError.self) {
            try ServerConfigurationFile.parse(#"{"databaseWait": "a while"}"#, path: "s.json")
        }
        var configuration = ServerConfiguration(database: .sqlite(path: "s.sqlite"), tables: [TableOptions(name: "t")])
        #expect(configuration.databaseWait == .seconds(30))
        configuration.databaseWait = .zero
        try configuration.validate()
        configuration.databaseWait = .seconds(-1)
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }

    @Test("readiness on SQLite: always ready, GET only, without a token")
    func readinessOnSQLite() async throws {
        try await withServer(.sqlite, tables: [TableOptions(name: uniqueTableName())], tokens: ["secret"]) { client in
            let ready = try await client.send(.get, "/health/ready", version: nil)
            #expect(ready.status == .ok)
            #expect(try JSONParser.parse(ready.bytes) == ["status": "ready"])
            let posted = try await client.send(
                .post, "/health/ready", version: nil, headers: [.authorization: "Bearer secret"])
            #expect(posted.status == .methodNotAllowed)
        }
    }

    @Test("the change feed's wait: from the file, bounded, and never more than half the idle timeout")
    func changeWait() throws {
        #expect(try configured(#"{"maxChangeWait": 12}"#).maxChangeWait == 12)
        #expect(throws: ConfigurationError.self) {
            try ServerConfigurationFile.parse(#"{"maxChangeWait": "long"}"#, path: "s.json")
        }
        var configuration = ServerConfiguration(
            database: .sqlite(path: "s.sqlite"),
            tables: [TableOptions(name: "todo")])
        #expect(configuration.changeWaitLimitSeconds == 30)
        configuration.idleTimeout = .seconds(20)
        #expect(configuration.changeWaitLimitSeconds == 10)
        configuration.idleTimeout = .milliseconds(900)
        #expect(configuration.changeWaitLimitSeconds == 1)
        for seconds in [0, -1, ServerConfiguration.largestMaxChangeWait + 1] {
            configuration.maxChangeWait = seconds
            #expect(throws: ConfigurationError.self) { try configuration.validate() }
        }
    }

    @Test("connection limits: from the file in seconds, bounded, and the body limit under what both databases store")
    func connectionLimits() throws {
        let file = try configured(
            #"{"headerTimeout": 2.5, "bodyTimeout": 30, "idleTimeout": 120, "maxConnections": 50}"#)
        #expect(
            file.headerTimeout == .milliseconds(2500) && file.bodyTimeout == .seconds(30)
                && file.idleTimeout == .seconds(120) && file.maxConnections == 50)
        #expect(throws: ConfigurationError.self) {
            try ServerConfigurationFile.parse(#"{"idleTimeout": "long"}"#, path: "s.json")
        }
        let costs = try configured(
            #"{"statementTimeout": 0.5, "shutdownTimeout": 3, "maxFilterDepth": 10, "maxFilterTerms": 99, "#
                + #""maxFilterGrowth": 4}"#)
        #expect(costs.statementTimeout == .milliseconds(500) && costs.shutdownTimeout == .seconds(3))
        #expect(costs.filterLimits == FilterLimits(maxDepth: 10, maxTerms: 99, maxGrowth: 4))
        #expect(try ServerConfiguration.timeLimit(seconds: 2.5, setting: "--header-timeout") == .milliseconds(2500))
        for seconds in [0, -1, 86_401, Double.infinity, Double.nan] {
            #expect(throws: ConfigurationError.self) {
                try ServerConfiguration.timeLimit(seconds: seconds, setting: "--idle-timeout")
            }
        }
        var configuration = ServerConfiguration(
            database: .sqlite(path: "s.sqlite"), tables: [TableOptions(name: "todo")])
        #expect(configuration.headerTimeout == .seconds(10) && configuration.maxConnections == 1000)
        try configuration.validate()
        configuration.maxConnections = 0
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.maxConnections = 10
        configuration.filterLimits.maxGrowth = 0
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.filterLimits.maxGrowth = 16
        configuration.statementTimeout = .zero
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.statementTimeout = .seconds(30)
        configuration.maxBodySize = ServerConfiguration.largestMaxBodySize + 1
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }

    @Test("--max-page-bytes: 8 MiB unless given, from 1 KiB to 128 MiB")
    func maxPageBytes() throws {
        #expect(try configured(#"{"maxPageBytes": 65536}"#).maxPageBytes == 65536)
        #expect(throws: ConfigurationError.self) {
            try ServerConfigurationFile.parse(#"{"maxPageBytes": "8M"}"#, path: "s.json")
        }
        var configuration = ServerConfiguration(
            database: .sqlite(path: "s.sqlite"), tables: [TableOptions(name: "todo")])
        #expect(configuration.maxPageBytes == 8 * 1024 * 1024)
        for (bytes, valid) in [(1023, false), (1024, true), (128 * 1024 * 1024, true), (128 * 1024 * 1024 + 1, false)] {
            configuration.maxPageBytes = bytes
            #expect(((try? configuration.validate()) != nil) == valid, "\(bytes)")
        }
    }

    @Test("--max-bulk-reads: half the cores unless given, from 1 to 10000")
    func maxBulkReads() throws {
        #expect(try configured(#"{"maxBulkReads": 3}"#).maxBulkReads == 3)
        var configuration = ServerConfiguration(
            database: .sqlite(path: "s.sqlite"), tables: [TableOptions(name: "todo")])
        #expect(
            configuration.maxBulkReads == ServerConfiguration.defaultMaxBulkReads && configuration.maxBulkReads >= 1)
        for refused in [0, 10_001] {
            configuration.maxBulkReads = refused
            #expect(throws: ConfigurationError.self) { try configuration.validate() }
        }
        configuration.maxBulkReads = 10_000
        try configuration.validate()
    }

    @Test("bulkReadPriority: idle unless given; the file takes idle or normal and names anything else")
    func bulkReadPriority() throws {
        let configuration = ServerConfiguration(
            database: .sqlite(path: "s.sqlite"), tables: [TableOptions(name: "todo")])
        #expect(configuration.bulkReadPriority == .idle)
        for priority in BulkReadPriority.allCases {
            let text = #"{"bulkReadPriority": "\#(priority.rawValue)"}"#
            #expect(try configured(text).bulkReadPriority == priority)
        }
        let refusal = #expect(throws: ConfigurationError.self) {
            try ServerConfigurationFile.parse(#"{"bulkReadPriority": "low"}"#, path: "s.json")
        }
        #expect(refusal?.description.contains(#"s.json: "bulkReadPriority" must be idle or normal, not 'low'"#) == true)
    }

    @Test("configuration file: a table's columns as an object or as the flag's text")
    func fileColumns() throws {
        let file = try configured(
            """
            {"tables": [{"name": "todo", "columns": {"text": "string", "rank": "number"}, "maxTop": 50},
                        {"name": "notes", "columns": "due:date"}, "tasks:columns=done:boolean"]}
            """)
        #expect(file.tables.map { $0.schema?.text } == ["rank:number;text:string", "due:date", "done:boolean"])
        #expect(file.tables.first?.maxTop == 50)
        #expect(
            throws: ConfigurationError(
                """
                s.json: table todo: columns: the type of the column 'rank' must be a string: string, number, boolean \
                or date
                """
            )
        ) {
            try ServerConfigurationFile.parse(
                #"{"tables": [{"name": "todo", "columns": {"rank": 5}}]}"#, path: "s.json")
        }
        #expect(throws: ConfigurationError("s.json: table todo: columns: declare at least one column, as name:type")) {
            try ServerConfigurationFile.parse(#"{"tables": [{"name": "todo", "columns": {}}]}"#, path: "s.json")
        }
    }

    @Test("--postgres-pool-size: 20 unless given, from 1 to 10000")
    func postgresPoolSize() throws {
        var configuration = ServerConfiguration(
            database: .sqlite(path: "s.sqlite"), tables: [TableOptions(name: "todo")])
        #expect(configuration.postgresPoolSize == 20)
        for size in [1, 64, 10_000] {
            configuration.postgresPoolSize = size
            try configuration.validate()
        }
        for size in [0, -1, 10_001] {
            configuration.postgresPoolSize = size
            #expect(throws: ConfigurationError.self, "\(size)") { try configuration.validate() }
        }
    }

    @Test("a pool of 2 PostgreSQL connections serves 16 concurrent writes", arguments: Backend.postgresIfAvailable)
    func smallPostgresPool(_ backend: Backend) async throws {
        let table = uniqueTableName("pool")
        let statuses = try await withServer(
            backend, tables: [TableOptions(name: table)], configure: { $0.postgresPoolSize = 2 }
        ) { client in
            try await withThrowingTaskGroup(of: UInt.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        try await client.send(.post, "/tables/\(table)", json: ["id": .string("p\(index)")]).status.code
                            .magnitude
                    }
                }
                var statuses: [UInt] = []
                for try await status in group { statuses.append(status) }
                return statuses
            }
        }
        #expect(statuses == Array(repeating: 201, count: 16))
    }

    /// The configuration that the configuration file `text` alone gives.
    private func configured(_ text: String) throws -> ServerConfiguration {
        try ServerSettingSources(file: ServerConfigurationFile.parse(text, path: "s.json")).configuration()
    }
}
