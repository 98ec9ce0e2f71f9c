import Foundation
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// Two users' stores on one per-user table, each with a JWT of its own user: whatever either store does, through
/// batches or single requests, it never sees, changes or deletes the other's records.
@Suite(.serialized) struct PerUserSyncTests {
    @Test(
        """
        two users' stores never see, change or delete each other's records: pull, \
        push, batch, one id in both, filters
        """,
        arguments: TestBackend.available)
    func twoUsersKeepTheirOwn(backend: TestBackend) async throws {
        let issuer = try TestTokenIssuer()
        let table = uniqueTableName()
        let server = try await LiveServer.start(backend, tables: [table]) { configuration in
            configuration.tables = [TableOptions(name: table, perUser: true)]
            configuration.jwt = issuer.settings()
        }
        let directory = TemporaryDirectory()
        var tokens: [String: String] = [:]
        func run(
            _ user: String, _ arguments: [String]
        ) async throws -> (status: Int32, stdout: String, stderr: String, killed: Bool) {
            var environment = CLI.environment
            environment["TABLESYNC_TOKEN"] = tokens[user]
            return try await CLI.run(["-C", directory.file(user)] + arguments, environment: environment)
        }
        func files(_ user: String) throws -> [String: String] {
            let folder = directory.file("\(user)/tables/\(table)")
            var texts: [String: String] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".json") {
                let record = try JSONParser.parse(
                    Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))))
                texts[String(name.dropLast(5))] = record["text"]?.stringValue
            }
            return texts
        }
        for user in ["ann", "bob"] {
            tokens[user] = try await issuer.hs256(TestClaims(sub: user))
            #expect(try await run(user, ["init", "--remote", server.baseURL, "--table", table]).status == 0)
        }

        for id in ["a1", "a2", "same"] {
            try directory.write("ann/tables/\(table)/\(id).json", #"{"id": "\#(id)", "text": "ann's \#(id)"}"# + "\n")
        }
        #expect(try await run("ann", ["sync"]).status == 0)
        for id in ["b1", "same"] {
            try directory.write("bob/tables/\(table)/\(id).json", #"{"id": "\#(id)", "text": "bob's \#(id)"}"# + "\n")
        }
        let bobSync = try await run("bob", ["sync"])
        #expect(bobSync.status == 0, "an id ann holds is bob's own new record, not a conflict: \(bobSync.stderr)")
        #expect(try await run("bob", ["pull", table]).status == 0)
        #expect(try files("bob") == ["b1": "bob's b1", "same": "bob's same"], "bob's pull brings none of ann's records")

        // Bob edits and deletes under ids he guessed, one request per operation, then by batch.
        try directory.write("bob/tables/\(table)/a1.json", #"{"id": "a1", "text": "bob guessed a1"}"# + "\n")
        try FileManager.default.removeItem(atPath: directory.file("bob/tables/\(table)/same.json"))
        #expect(try await run("bob", ["push", "--no-batch"]).status == 0)
        try directory.write("bob/tables/\(table)/a2.json", #"{"id": "a2", "text": "bob guessed a2"}"# + "\n")
        #expect(try await run("bob", ["sync"]).status == 0)
        let filtered = try await run("bob", ["pull", table, "--filter", "owner eq 'ann'"])
        #expect(
            filtered.status != 0 && !filtered.stderr.contains("ann's"),
            "a filter on the owner is refused: \(filtered.stderr)")

        #expect(try await run("ann", ["sync"]).status == 0)
        #expect(
            try files("ann") == ["a1": "ann's a1", "a2": "ann's a2", "same": "ann's same"],
            "ann's records as she wrote them")
        let annRows = try await Reliability.serverRows(server.baseURL, table: table, token: tokens["ann"])
        #expect(annRows.mapValues { $0["deleted"] == true } == ["a1": false, "a2": false, "same": false])
        let bobRows = try await Reliability.serverRows(server.baseURL, table: table, token: tokens["bob"])
        #expect(
            bobRows.mapValues { $0["text"]?.stringValue ?? "" } == [
                "b1": "bob's b1", "same": "bob's same", "a1": "bob guessed a1", "a2": "bob guessed a2"
            ])
        #expect(bobRows["same"]?["deleted"] == true, "bob deleted his own record, not ann's")
        await server.stop()
        TestBackend.removeFiles(of: server.database)
    }
}
