import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// `tablesync` killed with SIGKILL at random instants during push, pull, hand-edit scans and conflict resolution,
/// against a live server; then `verify`, one clean `sync`, and a check of the store's invariants and of the
/// server's rows against an oracle of what each side wrote. Also the races a cron user meets.
@Suite("Reliability: crashes and races", .serialized) struct ReliabilityCrashTests {
    /// A server, a store made with the CLI, and a second writer that changes the server directly.
    struct Fixture {
        let server: LiveServer
        let table: String
        let directory = TemporaryDirectory()
        var store: String { directory.file("store") }
        let writer: ServerHTTPClient

        static func make(remote: ((LiveServer) throws -> String)? = nil) async throws -> (Fixture, String) {
            let table = uniqueTableName("crash")
            let server = try await LiveServer.start(.sqlite, tables: [table])
            let fixture = Fixture(
                server: server, table: table,
                writer: ServerHTTPClient(
                    baseURL: server.baseURL, defaultHeaders: ["ZUMO-API-VERSION": "3.0.0"],
                    timeout: 10, retryPolicy: .none))
            let url = try remote?(server) ?? server.baseURL
            let initialized = try await CLI.run(["-C", fixture.store, "init", "--remote", url, "--table", table])
            #expect(initialized.status == 0, "\(initialized.stderr)")
            #expect(try await CLI.run(["-C", fixture.store, "query", "add", table, "all"]).status == 0)
            return (fixture, url)
        }

        func file(_ id: String) -> String { store + "/tables/\(table)/" + RecordFileName.fileName(for: id) }

        /// Writes `record` as a person would: plain JSON, not canonical.
        func handWrite(_ record: [String: JSONValue]) throws {
            try Data(CanonicalJSON.encode(.object(record), style: .compact)).write(
                to: URL(fileURLWithPath: file(record["id"]!.stringValue!)))
        }

        func handRead(_ id: String) throws -> [String: JSONValue]? {
            guard let data = FileManager.default.contents(atPath: file(id)) else { return nil }
            return try JSONParser.parse(Array(data)).objectValue
        }

        /// Another device's write, straight to the server (PUT without If-Match: last writer wins).
        func serverWrite(_ record: [String: JSONValue], exists: Bool) async throws {
            let body = CanonicalJSON.encode(.object(record), style: .compact)
            let id = record["id"]!.stringValue!
            let response = try await writer.send(
                exists
                    ? HTTPRequest(method: "PUT", path: "/tables/\(table)/\(id)", body: body)
                    : HTTPRequest(method: "POST", path: "/tables/\(table)", body: body))
            #expect((200...299).contains(response.status), "server write \(id): \(response.status)")
        }

        func serverDelete(_ id: String) async throws {
            let response = try await writer.send(HTTPRequest(method: "DELETE", path: "/tables/\(table)/\(id)"))
            #expect((200...299).contains(response.status))
        }

        func stop() async {
            await server.stop()
            TestBackend.removeFiles(of: server.database)
        }
    }

    @Test("SIGKILL at random instants of push, pull, sync and resolve: verify passes, one sync converges, nothing lost")
    func crashSweep() async throws {
        let (fixture, _) = try await Fixture.make()
        let table = fixture.table
        let store = fixture.store
        var generator = SeededGenerator(seed: Reliability.seed)
        let trials = Reliability.scale(bounded: 12, long: 220)
        var clientOracle: [String: [String: JSONValue]] = [:]
        var serverOracle: [String: [String: JSONValue]] = [:]
        var deleted: Set<String> = []
        var serverDeleted: Set<String> = []
        var window = 0.3
        var landed = 0
        // Run files of the stat index seen after a trial: kills also land in flushes and merges.
        var indexRuns: Set<String> = []
        var commands: [String: Int] = [:]
        for trial in 0..<trials {
            // Local changes by hand (the scan queues them) and through the CLI; the other device writes too.
            for step in 0..<Int.random(in: 1...6, using: &generator) {
                let id = "c\(Int.random(in: 0..<(20 + trial), using: &generator))"
                // A deleted id stays taken on the server (inserting it again is a conflict by design).
                if deleted.contains(id) { continue }
                let mark: JSONValue = .string("t\(trial)s\(step)")
                if var record = try fixture.handRead(id) {
                    if Int.random(in: 0..<5, using: &generator) == 0 {
                        if Bool.random(using: &generator) {
                            try FileManager.default.removeItem(atPath: fixture.file(id))
                        } else {
                            #expect(try await CLI.run(["-C", store, "delete", table, id]).status == 0)
                        }
                        clientOracle[id] = nil
                        deleted.insert(id)
                    } else {
                        record["mark"] = mark
                        try fixture.handWrite(record)
                        clientOracle[id] = ServerRecord.content(record)
                    }
                } else if Bool.random(using: &generator) {
                    try fixture.handWrite(["id": .string(id), "mark": mark])
                    clientOracle[id] = ["id": .string(id), "mark": mark]
                } else {
                    let inserted = try await CLI.run([
                        "-C", store, "insert", table, "{\"id\":\"\(id)\",\"mark\":\"\(mark.stringValue!)\"}"
                    ])
                    #expect(inserted.status == 0, "\(inserted.stderr)")
                    clientOracle[id] = ["id": .string(id), "mark": mark]
                }
            }
            for step in 0..<Int.random(in: 0...5, using: &generator) {
                let id = "s\(Int.random(in: 0..<(30 + trial), using: &generator))"
                if serverDeleted.contains(id) { continue }
                if serverOracle[id] != nil, serverOracle.count > 12, Int.random(in: 0..<8, using: &generator) == 0 {
                    try await fixture.serverDelete(id)
                    serverOracle[id] = nil
                    serverDeleted.insert(id)
                    continue
                }
                let record: [String: JSONValue] = ["id": .string(id), "mark": .string("server t\(trial)s\(step)")]
                try await fixture.serverWrite(record, exists: serverOracle[id] != nil)
                serverOracle[id] = ServerRecord.content(record)
            }
            // A quarter of the trials kill a conflict resolution instead: make a conflict first.
            var command = [["sync"], ["push"], ["pull", table, "--query-id", "all"]][
                Int.random(in: 0..<3, using: &generator)]
            if trial % 4 == 3, let id = clientOracle.keys.sorted().first {
                let before = try await CLI.run(["-C", store, "sync"])
                #expect(before.status == 0, "trial \(trial): \(before.stdout) \(before.stderr)")
                var server = clientOracle[id]!
                server["id"] = .string(id)
                server["mark"] = "server side of the conflict"
                try await fixture.serverWrite(server, exists: true)
                var local = try #require(try fixture.handRead(id))
                local["mark"] = .string("local side of the conflict t\(trial)")
                try fixture.handWrite(local)
                clientOracle[id] = ServerRecord.content(local)
                #expect(try await CLI.run(["-C", store, "push"]).status == 3, "the conflict waits")
                command = ["resolve", "\(table)/\(id)", "--keep-local"]
            }
            commands[command[0], default: 0] += 1

            let paging = ["sync", "pull"].contains(command[0]) ? ["--page-size", "3"] : []
            let process = try CLI.start(["-C", store] + command + paging)
            let delay = Double.random(in: 0..<window, using: &generator)
            try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
            kill(process.processIdentifier, SIGKILL)
            let ended = await CLI.wait(process)
            if ended.killed {
                landed += 1
                window *= 1.1
            } else {
                window = max(0.02, window * 0.8)
            }

            // Recovery, as the next cron run would do it.
            let verified = try await CLI.run(["-C", store, "verify"])
            #expect(
                verified.status == 0,
                """
                trial \(trial), after killing \(command) at \(delay)s: verify says \
                \(verified.stdout) \(verified.stderr)
                """
            )
            if command[0] == "resolve" {
                let id = String(command[1].split(separator: "/").last!)
                if FileManager.default.fileExists(
                    atPath: store + "/conflicts/\(table)/" + RecordFileName.fileName(for: id))
                {
                    let resolved = try await CLI.run(["-C", store] + command)
                    #expect(
                        resolved.status == 0, "trial \(trial): resolve again: \(resolved.stdout) \(resolved.stderr)")
                }
            }
            let synced = try await CLI.run(["-C", store, "sync", "--page-size", "3"])
            #expect(
                synced.status == 0,
                "trial \(trial), after killing \(command) at \(delay)s: sync says \(synced.stdout) \(synced.stderr)")

            let expected = clientOracle.merging(serverOracle) { local, _ in local }
            let server = try await Reliability.serverContent(fixture.server.baseURL, table: table)
            #expect(server == expected, "trial \(trial), after killing \(command) at \(delay)s: the server's rows")
            let context = try SyncContext(directory: store)
            #expect(
                try await Reliability.localContent(context, table: table) == expected,
                "trial \(trial): the store's records")
            #expect(await context.pendingOperations.isEmpty, "trial \(trial): the journal drained")
            #expect(try await context.conflictKeys().isEmpty, "trial \(trial): no conflict from a replayed operation")
            try await Reliability.checkInvariants(context)
            indexRuns.formUnion(
                try FileManager.default.contentsOfDirectory(atPath: store + "/.tablesync/index").filter {
                    $0.hasSuffix(".run")
                })
            if server != expected { break }
        }
        print(
            """
            crash sweep: \(trials) trials, \(landed) killed mid-run, commands \(commands.sorted { $0.key < $1.key }), \
            stat index runs seen \(indexRuns.sorted())
            """
        )
        #expect(landed > 0, "some kills landed while the command ran")
        #expect(
            indexRuns.contains { (IndexRun.sequences(ofFileName: $0, table: table)?.count ?? 0) > 1 },
            "the index was flushed and its runs merged during the sweep (TABLESYNC_INDEX_FLUSH_LINES)")
        await fixture.stop()
    }

    @Test("two syncs started together: one runs, the other exits 6 at once")
    func concurrentSyncs() async throws {
        let proxy = ProxySlot()
        let (fixture, _) = try await Fixture.make { server in
            let made = try LoopbackProxy(.faults(upstreamPort: server.port))
            proxy.value = made
            return made.baseURL
        }
        let faulty = try #require(proxy.value)
        // Every request takes a while, so the first run still holds the lock when the second starts.
        faulty.inject(.delayAfterCommit(seconds: 0.5), times: 100)
        try fixture.handWrite(["id": "a", "text": "x"])
        let first = try CLI.start(["-C", fixture.store, "sync"])
        let second = try CLI.start(["-C", fixture.store, "sync"])
        let statuses = [await CLI.wait(first).status, await CLI.wait(second).status].sorted()
        #expect(statuses == [0, 6])
        // A run killed while holding the lock leaves no stale lock behind.
        let killed = try CLI.start(["-C", fixture.store, "sync"])
        try await Reliability.waitUntil("the third run took the lock") {
            ((try? String(contentsOfFile: fixture.store + "/.tablesync/lock", encoding: .utf8)) ?? "").contains(
                "pid \(killed.processIdentifier)")
        }
        kill(killed.processIdentifier, SIGKILL)
        _ = await CLI.wait(killed)
        faulty.clearFaults()
        #expect(try await CLI.run(["-C", fixture.store, "sync"]).status == 0)
        faulty.stop()
        await fixture.stop()
    }

    @Test("a file edited by hand while a push or a pull waits on the server survives and is pushed next time")
    func handEditDuringSync() async throws {
        let proxy = ProxySlot()
        let (fixture, _) = try await Fixture.make { server in
            let made = try LoopbackProxy(.faults(upstreamPort: server.port))
            proxy.value = made
            return made.baseURL
        }
        let faulty = try #require(proxy.value)
        let table = fixture.table
        try fixture.handWrite(["id": "e", "text": "one"])
        try fixture.handWrite(["id": "r", "text": "one"])
        #expect(try await CLI.run(["-C", fixture.store, "sync"]).status == 0)

        // Push: the update of e is applied on the server, and its answer takes a second; meanwhile e is edited again.
        var e = try #require(try fixture.handRead("e"))
        e["text"] = "two"
        try fixture.handWrite(e)
        faulty.inject(.delayAfterCommit(seconds: 1), method: "PUT")
        // One request per operation, so the delayed PUT is this record's own update.
        let push = try CLI.start(["-C", fixture.store, "push", "--no-batch"])
        try await Reliability.waitUntil("the push sent its PUT") { faulty.log.contains(where: { $0.method == "PUT" }) }
        e["text"] = "three, typed while the push ran"
        try fixture.handWrite(e)
        #expect(await CLI.wait(push).status == 0)
        #expect(
            try fixture.handRead("e")?["text"] == "three, typed while the push ran",
            "the push's write-back kept the edit")

        // Pull: the page takes a second; meanwhile r is edited by hand.
        try await fixture.serverWrite(["id": "s", "text": "from the server"], exists: false)
        faulty.inject(.delayAfterCommit(seconds: 1), method: "GET", pathContains: "updatedAt")
        let pull = try CLI.start(["-C", fixture.store, "pull", table, "--query-id", "all"])
        try await Reliability.waitUntil("the pull asked for its page") {
            faulty.log.contains(where: { $0.method == "GET" && $0.target.contains("updatedAt") })
        }
        var r = try #require(try fixture.handRead("r"))
        r["text"] = "two, typed while the pull ran"
        try fixture.handWrite(r)
        #expect(await CLI.wait(pull).status == 0)
        #expect(try fixture.handRead("r")?["text"] == "two, typed while the pull ran")

        #expect(try await CLI.run(["-C", fixture.store, "sync"]).status == 0)
        let server = try await Reliability.serverContent(fixture.server.baseURL, table: table)
        #expect(server["e"]?["text"] == "three, typed while the push ran")
        #expect(server["r"]?["text"] == "two, typed while the pull ran")
        #expect(server["s"]?["text"] == "from the server")
        #expect(try fixture.handRead("s")?["text"] == "from the server")
        faulty.stop()
        await fixture.stop()
    }
}

/// Hands a proxy made inside a fixture's setup closure back to the test.
final class ProxySlot: @unchecked Sendable {
    // Written once by the setup closure before the test reads it; no concurrent access.
    var value: LoopbackProxy?
}
