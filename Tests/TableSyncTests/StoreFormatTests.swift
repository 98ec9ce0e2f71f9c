import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// The store's format across versions of the binary, against a store 0.1.0 wrote (committed under
/// `Tests/Fixtures/format-0.1.0/store`, made by `tablesync init`, `insert`, `push` and `update` of that version):
/// a newer binary upgrades it in place; an older binary refuses a newer store, naming both, and touches nothing.
@Suite struct StoreFormatTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/format-0.1.0/store").path

    /// A copy of the fixture store in a directory of the test's own.
    static func copyOfFixture() throws -> (TemporaryDirectory, String) {
        let directory = TemporaryDirectory()
        let store = directory.file("store")
        try FileManager.default.copyItem(atPath: fixture, toPath: store)
        return (directory, store)
    }

    /// Every file under `root`, by relative path, with its bytes.
    static func snapshot(_ root: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                files[path] = FileManager.default.contents(atPath: root + "/" + path)
            }
        }
        return files
    }

    @Test("the rule: this format and older ones are read (older ones upgraded), newer ones and nonsense refused")
    func rule() {
        #expect(StoreFormat.decide(found: nil) == .upgrade, "0.1.0 wrote no number")
        #expect(StoreFormat.decide(found: StoreFormat.current) == .current)
        #expect(StoreFormat.decide(found: StoreFormat.current + 1) == .refuse(found: StoreFormat.current + 1))
        #expect(StoreFormat.decide(found: 0) == .refuse(found: 0), "no version wrote 0")
    }

    @Test("a store 0.1.0 wrote: read as it is, upgraded in place by the first read-write open, its contents kept")
    func olderStoreIsUpgraded() async throws {
        let (directory, store) = try Self.copyOfFixture()
        defer { withExtendedLifetime(directory) {} }
        let settingsBefore = try JSONParser.parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: store + "/tablesync.json"))))
        #expect(settingsBefore[StoreFormat.settingsKey] == nil)
        let status = try await CLI.run(["-C", store, "status", "--json"])
        #expect(status.status == 0, "\(status.stdout) \(status.stderr)")
        let context = try SyncContext(directory: store)
        let settingsAfter = try JSONParser.parse(
            Array(try Data(contentsOf: URL(fileURLWithPath: store + "/tablesync.json"))))
        #expect(settingsAfter[StoreFormat.settingsKey] == .integer(Int64(StoreFormat.current)))
        var rest = settingsAfter.objectValue ?? [:]
        rest[StoreFormat.settingsKey] = nil
        #expect(.object(rest) == settingsBefore, "every other setting kept")
        let pending = await context.pendingOperations
        #expect(pending.map { "\($0.kind.rawValue) \($0.id)" } == ["update b"], "the pending update survives")
        #expect(try await context.table("todo").read(id: "a")?["text"] == "written before formats were numbered")
        await context.close()
    }

    @Test("a store of a newer format: refused with both formats named, exit 2, and not a byte of it changed")
    func newerStoreIsRefused() async throws {
        let (directory, store) = try Self.copyOfFixture()
        defer { withExtendedLifetime(directory) {} }
        var settings = try #require(
            try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: store + "/tablesync.json"))))
                .objectValue)
        settings[StoreFormat.settingsKey] = .integer(Int64(StoreFormat.current + 1))
        try Data(CanonicalJSON.encode(.object(settings))).write(to: URL(fileURLWithPath: store + "/tablesync.json"))
        let before = try Self.snapshot(store)
        for command in [["status"], ["sync"], ["insert", "todo", #"{"id": "c"}"#]] {
            let run = try await CLI.run(["-C", store] + command)
            #expect(run.status == 2, "\(command): \(run.stdout) \(run.stderr)")
            #expect(
                run.stderr.contains("format \(StoreFormat.current + 1)")
                    && run.stderr.contains("up to \(StoreFormat.current)")
                    && run.stderr.contains(TableSyncVersion.current), "\(run.stderr)")
        }
        #expect(try Self.snapshot(store) == before, "nothing written, not even the cache")
    }
}
