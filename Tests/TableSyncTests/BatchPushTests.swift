import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// The batch pipeline against a live server: the same journal pushed in batches and one request per operation
/// ends the same; a batch whose answer was lost is resumed safely; servers without the extension get single
/// requests.
@Suite("Batch push against a live server", .serialized) struct BatchPushTests {
    static let backends = TestBackend.available

    /// One step of a randomised history. Local steps go through the library or edit files by hand; remote
    /// steps are another device's changes, pushed before the local push (so local versions go stale).
    enum Step: Sendable {
        case localInsert(String, Int)
        case localUpdate(String, Int)
        case localDelete(String)
        case handEdit(String, Int)
        case remoteInsert(String, Int)
        case remoteUpdate(String, Int)
        case remoteDelete(String)
    }

    /// Base records, remote changes and local changes (inserts, updates, deletes, hand edits, collapses,
    /// stale versions, an insert whose id the other device took), drawn from `seed`.
    static func history(seed: UInt64) -> (base: [String], steps: [Step]) {
        var random = SeededGenerator(seed: seed)
        let base = (0..<40).map { "r\($0)" }
        var remote: [Step] = []
        // Local steps in groups that stay together (an insert and the step that collapses into it).
        var local: [[Step]] = []
        for id in base {
            switch Int.random(in: 0..<10, using: &random) {
            case 0, 1: remote.append(.remoteUpdate(id, Int.random(in: 0..<1000, using: &random)))
            case 2: remote.append(.remoteDelete(id))
            default: break
            }
            switch Int.random(in: 0..<10, using: &random) {
            case 0...4: local.append([.localUpdate(id, Int.random(in: 0..<1000, using: &random))])
            case 5, 6: local.append([.localDelete(id)])
            case 7: local.append([.handEdit(id, Int.random(in: 0..<1000, using: &random))])
            default: break
            }
        }
        for index in 0..<12 {
            let id = "n\(index)"
            if index < 4 { remote.append(.remoteInsert(id, index)) }
            var group: [Step] = [.localInsert(id, Int.random(in: 0..<1000, using: &random))]
            if index % 5 == 1 { group.append(.localUpdate(id, Int.random(in: 0..<1000, using: &random))) }
            if index % 5 == 2 { group.append(.localDelete(id)) }
            local.append(group)
        }
        local.shuffle(using: &random)
        return (base, remote + local.flatMap { $0 })
    }

    /// A store, another device's store and a table of their own on `server`: one side of a comparison.
    struct Side {
        let table: String
        let main: SyncContext
        let other: SyncContext

        static func make(server: LiveServer, table: String, directory: TemporaryDirectory) throws -> Side {
            let settings = StoreSettings(remote: server.baseURL, apiVersion: 3, tables: [table])
            return Side(
                table: table,
                main: try SyncContext.initialize(directory: directory.file("\(table)-main"), settings: settings),
                other: try SyncContext.initialize(directory: directory.file("\(table)-other"), settings: settings))
        }

        /// Plays `history`, then pushes the local changes with `options`.
        func play(_ history: (base: [String], steps: [Step]), options: SyncOptions) async throws -> PushReport {
            let mine = try await main.table(table)
            let theirs = try await other.table(table)
            for id in history.base { try await mine.insert(["id": .string(id), "text": .string("base \(id)"), "n": 0]) }
            try await main.push(options: options)
            try await other.pull(table: table, options: options)
            for step in history.steps {
                switch step {
                case .remoteInsert(let id, let n):
                    try await theirs.insert(["id": .string(id), "text": "theirs", "n": .integer(Int64(n))])
                case .remoteUpdate(let id, let n):
                    try await theirs.update(["id": .string(id), "text": "theirs", "n": .integer(Int64(n))])
                case .remoteDelete(let id): try await theirs.delete(id: id)
                default: break
                }
            }
            try await other.push(options: options)
            for step in history.steps {
                switch step {
                case .localInsert(let id, let n):
                    try await mine.insert(["id": .string(id), "text": "mine", "n": .integer(Int64(n))])
                case .localUpdate(let id, let n):
                    try await mine.update(["id": .string(id), "text": "mine", "n": .integer(Int64(n))])
                case .localDelete(let id): try await mine.delete(id: id)
                case .handEdit(let id, let n):
                    let path = main.layout.recordFile(table: table, id: id)
                    try Data("{\"id\": \"\(id)\", \"text\": \"by hand\", \"n\": \(n)}\n".utf8).write(
                        to: URL(fileURLWithPath: path))
                default: break
                }
            }
            return try await main.push(options: options)
        }

        /// The store's files people see (records, conflicts, journal) and the server's rows, with this side's
        /// table name and the server-assigned stamps (`version`, `createdAt`, `updatedAt`) masked: those differ
        /// between two runs, everything else must not.
        func snapshot(server: LiveServer) async throws -> [String: String] {
            var files: [String: String] = [:]
            let root = main.layout.root
            let enumerator = FileManager.default.enumerator(atPath: root)
            while let relative = enumerator?.nextObject() as? String {
                guard relative.hasPrefix("tables/") || relative.hasPrefix("conflicts/") || relative == "journal.jsonl"
                else { continue }
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory),
                    !isDirectory.boolValue
                else { continue }
                files[mask(relative)] = mask(try String(contentsOfFile: root + "/" + relative, encoding: .utf8))
            }
            let http = ServerHTTPClient(
                baseURL: server.baseURL,
                defaultHeaders: [
                    ProtocolHeader.apiVersion: "3.0.0",
                    ProtocolHeader.extensions: ProtocolExtension.wholePages.rawValue
                ], retryPolicy: .none)
            let rows = try await http.send(
                HTTPRequest(
                    method: "GET", path: TablePath.table(table),
                    query: [("__includeDeleted", "true"), ("$top", "1000"), ("$orderby", "id")]))
            let items = try JSONParser.parse(rows.body)["items"]
            files["server rows"] = mask(CanonicalJSON.string(items ?? .null))
            return files
        }

        private func mask(_ text: String) -> String {
            // A synced mark is a digest of its file, versions and dates included: masked like them.
            text.replacingOccurrences(of: table, with: "TABLE")
                .replacingOccurrences(
                    of: #""@synced": "[A-Za-z0-9_-]{22}""#, with: #""@synced": "<mark>""#, options: .regularExpression
                )
                .replacingOccurrences(of: #"[A-Za-z0-9+/]{11}="#, with: "<version>", options: .regularExpression)
                .replacingOccurrences(
                    of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"#, with: "<date>", options: .regularExpression)
        }
    }

    static let differentialCases: [(TestBackend, StoreSettings.ConflictPolicy, UInt64)] = backends.flatMap { backend in
        [(backend, .manual, 1), (backend, .manual, 2), (backend, .serverWins, 3), (backend, .clientWins, 4)]
    }

    @Test(
        "a randomised journal ends the same pushed in batches and one request per operation",
        arguments: differentialCases)
    func batchEqualsSingle(_ backend: TestBackend, _ policy: StoreSettings.ConflictPolicy, _ seed: UInt64) async throws
    {
        let history = Self.history(seed: seed)
        let directory = TemporaryDirectory()
        let tables = [uniqueTableName(), uniqueTableName()]
        let server = try await LiveServer.start(backend, tables: tables)
        defer { TestBackend.removeFiles(of: server.database) }
        // Small batches, so conflicts and refusals fall in the middle of batches and many batches go.
        let batched = SyncOptions(conflictPolicy: policy, retryPolicy: .none).with { $0.batchMaxOperations = 7 }
        let single = SyncOptions(conflictPolicy: policy, retryPolicy: .none, batch: false)
        let batchSide = try Side.make(server: server, table: tables[0], directory: directory)
        let singleSide = try Side.make(server: server, table: tables[1], directory: directory)
        let batchReport = try await batchSide.play(history, options: batched)
        let singleReport = try await singleSide.play(history, options: single)
        #expect(batchReport.batched && !singleReport.batched)
        #expect(batchReport.requests < singleReport.requests)
        #expect(batchReport.applied == singleReport.applied)
        #expect(batchReport.conflicts.map(\.id) == singleReport.conflicts.map(\.id))
        #expect(batchReport.rejected.map(\.id) == singleReport.rejected.map(\.id))
        #expect(batchReport.settledByPolicy == singleReport.settledByPolicy)
        if policy == .manual { #expect(!batchReport.conflicts.isEmpty, "the history makes conflicts") }
        for side in [batchSide, singleSide] {
            #expect(!FileSystem.exists(side.main.layout.settledFile), "the push ended with the journal rewritten")
            #expect(try Journal.load(layout: side.main.layout).operations == (await side.main.pendingOperations))
        }
        let batchFiles = try await batchSide.snapshot(server: server)
        let singleFiles = try await singleSide.snapshot(server: server)
        #expect(batchFiles.keys.sorted() == singleFiles.keys.sorted())
        for (name, text) in singleFiles.sorted(by: { $0.key < $1.key }) {
            #expect(batchFiles[name] == text, "\(name) differs")
        }
        await server.stop()
    }

    @Test(
        "a batch applied on the server whose answer was lost is sent again without a second effect", arguments: backends
    )
    func lostBatchAnswer(_ backend: TestBackend) async throws {
        let table = uniqueTableName()
        let server = try await LiveServer.start(backend, tables: [table])
        defer { TestBackend.removeFiles(of: server.database) }
        let directory = TemporaryDirectory()
        let settings = StoreSettings(remote: server.baseURL, apiVersion: 3, tables: [table])
        let store = try SyncContext.initialize(directory: directory.file("store"), settings: settings)
        let todo = try await store.table(table)
        let options = SyncOptions(retryPolicy: .none).with { $0.batchMaxOperations = 4 }
        for index in 0..<6 { try await todo.insert(["id": .string("u\(index)"), "text": "base"]) }
        try await store.push(options: options)
        // Inserts, updates and deletes, each kind both in the part the server applied and after it.
        try await todo.insert(["id": "i0", "text": "new"])
        try await todo.update(["id": "u0", "text": "changed"])
        try await todo.delete(id: "u1")
        try await todo.insert(["id": "i1", "text": "new"])
        try await todo.update(["id": "u2", "text": "changed"])
        try await todo.delete(id: "u3")
        let pending = await store.pendingOperations
        #expect(pending.count == 6)

        // The first four operations reach the server in a batch, exactly as the push sends them, and the
        // connection drops before the answer arrives: the store knows nothing of it.
        let client = TableClient.make(settings: settings, apiVersion: 3, retryPolicy: .none)
        var sent: [OutgoingOperation] = []
        for operation in pending.prefix(4) {
            let record =
                operation.kind == .delete ? nil : try await todo.read(id: operation.id).map(ServerRecord.content)
            sent.append(
                OutgoingOperation(operation: operation, sent: record, sentFile: nil, baseVersion: operation.baseVersion)
            )
        }
        _ = try await BatchSender(client: client, gzipLevel: 1).send(sent)
        let http = ServerHTTPClient(
            baseURL: server.baseURL, defaultHeaders: [ProtocolHeader.apiVersion: "3.0.0"], retryPolicy: .none)
        func serverRows() async throws -> [String: JSONValue] {
            let rows = try await http.send(
                HTTPRequest(method: "GET", path: TablePath.table(table), query: [("__includeDeleted", "true")]))
            let items = try JSONParser.parse(rows.body)["items"]?.arrayValue ?? []
            return Dictionary(uniqueKeysWithValues: items.map { ($0["id"]!.stringValue!, $0) })
        }
        let afterCut = try await serverRows()

        let resumed = try await store.push(options: options)
        #expect(resumed.batched)
        #expect(resumed.applied == 6 && resumed.conflicts.isEmpty && resumed.rejected.isEmpty)
        #expect(await store.pendingOperations.isEmpty)
        #expect(try await store.conflicts().isEmpty)
        let after = try await serverRows()
        for id in ["i0", "u0", "u1", "i1"] {
            #expect(after[id] == afterCut[id], "\(id) was applied once: the second sending changed nothing")
        }
        #expect(after["i0"]?["text"] == "new" && after["u0"]?["text"] == "changed" && after["u1"]?["deleted"] == true)
        #expect(after["i1"]?["text"] == "new" && after["u2"]?["text"] == "changed" && after["u3"]?["deleted"] == true)
        // The store holds the server's copies.
        #expect(try await todo.read(id: "u0")?["version"] == after["u0"]?["version"])
        #expect(try await todo.read(id: "i0")?["version"] == after["i0"]?["version"])
        await server.stop()
    }

    @Test("a server without the batch extension, and --no-batch, get one request per operation", arguments: backends)
    func fallback(_ backend: TestBackend) async throws {
        for (batchOffered, batchAllowed) in [(false, true), (true, false), (true, true)] {
            let table = uniqueTableName()
            let server = try await LiveServer.start(backend, tables: [table], configure: { $0.batch = batchOffered })
            let directory = TemporaryDirectory()
            let settings = StoreSettings(remote: server.baseURL, apiVersion: 3, tables: [table])
            let store = try SyncContext.initialize(directory: directory.file("store"), settings: settings)
            let todo = try await store.table(table)
            for index in 0..<5 { try await todo.insert(["id": .string("r\(index)"), "text": "x"]) }
            let report = try await store.push(options: SyncOptions(retryPolicy: .none, batch: batchAllowed))
            let batched = batchOffered && batchAllowed
            #expect(report.batched == batched)
            #expect(report.requests == (batched ? 1 : 5))
            #expect(report.applied == 5)
            #expect(await store.pendingOperations.isEmpty)
            #expect(try await todo.read(id: "r4")?["version"] != nil)
            await server.stop()
            TestBackend.removeFiles(of: server.database)
        }
    }
}
