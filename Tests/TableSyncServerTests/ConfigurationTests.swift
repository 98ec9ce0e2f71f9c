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

    @Test("database locations")
    func databases() throws {
        #expect(try DatabaseLocation.parse("sqlite:server.sqlite") == .sqlite(path: "server.sqlite"))
        #expect(try DatabaseLocation.parse("postgres://me:p%40ss@db.local:6543/sync")
                == .postgres(PostgresLocation(host: "db.local", port: 6543, username: "me", password: "p@ss", database: "sync")))
        #expect(try DatabaseLocation.parse("postgres://me@127.0.0.1/sync")
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
            try ServerConfiguration(database: .sqlite(path: "x"), tables: tables + [TableOptions(name: "TODO")]).validate()
        }
    }

    @Test("tokens from a file or the environment")
    func tokens() {
        #expect(TokenList.parse(fileContents: "# comment\n a1 \n\nb2\n") == ["a1", "b2"])
        #expect(TokenList.parse(environmentValue: "a1, b2 c3") == ["a1", "b2", "c3"])
    }

    @Test("configuration file")
    func file() throws {
        let file = try ServerConfigurationFile.parse("""
            {"host": "127.0.0.1", "port": 9000, "database": "sqlite:s.sqlite",
             "tables": ["todo:pageSize=10", {"name": "notes", "softDelete": false}], "maxBodySize": 2048}
            """, path: "server.json")
        #expect(file.port == 9000)
        #expect(file.tables == [TableOptions(name: "todo", pageSize: 10), TableOptions(name: "notes", softDelete: false)])
        #expect(throws: ConfigurationError.self) { try ServerConfigurationFile.parse(#"{"tokens": ["x"]}"#, path: "s.json") }
    }
}
