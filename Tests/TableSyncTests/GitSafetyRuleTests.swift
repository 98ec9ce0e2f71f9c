import Foundation
import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import tablesync
@testable import TableSyncStorage

/// The pure rules behind a store's safety under git, each alone: the synced mark, what a scan makes of a changed or
/// missing file, the journal's clone and acknowledgements, and the command line's escaping of what it prints.
@Suite struct GitSafetyRuleTests {
    static let record: [String: JSONValue] = [
        "id": "r1", "text": "a", "version": "v1", "updatedAt": "2026-01-01T00:00:00.000Z",
        "createdAt": "2026-01-01T00:00:00.000Z"
    ]

    // MARK: - The synced mark

    @Test(
        """
        a stamped file is intact; re-indented it still is; any change of a property, a system property or the mark is \
        not
        """
    )
    func syncedMark() throws {
        let bytes = SyncedMark.stamped(Self.record)
        let stamped = try #require(try JSONParser.parse(bytes).objectValue)
        #expect(stamped[SyncedMark.property]?.stringValue?.count == SyncedMark.length)
        #expect(SyncedMark.isIntact(stamped, bytes: bytes))
        #expect(bytes == RecordFile.encode(stamped), "the stamped file is canonical")
        let compact = CanonicalJSON.encode(.object(stamped), style: .compact)
        #expect(SyncedMark.isIntact(stamped, bytes: compact), "re-indented, still the server's copy")
        for (name, value) in [
            ("text", JSONValue.string("b")), ("version", "v2"), ("updatedAt", "2026-01-02T00:00:00.000Z"),
            ("added", true), (SyncedMark.property, "AAAAAAAAAAAAAAAAAAAAAA")
        ] {
            var changed = stamped
            changed[name] = value
            #expect(!SyncedMark.isIntact(changed, bytes: RecordFile.encode(changed)), "\(name) changed")
        }
        var removed = stamped
        removed["text"] = nil
        #expect(!SyncedMark.isIntact(removed, bytes: RecordFile.encode(removed)))
        #expect(!SyncedMark.isIntact(Self.record, bytes: RecordFile.encode(Self.record)), "no mark at all")
        #expect(SyncedMark.stamped(Self.record) == bytes, "the same record, the same mark")
        #expect(ServerRecord.content(stamped)[SyncedMark.property] == nil, "never sent")
    }

    @Test("a record file counts as canonical only when it is, and its mark is then checked from its bytes alone")
    func canonicalFilesAreNotEncodedAgain() throws {
        let name = RecordFileName.fileName(for: "r1")
        func check(_ bytes: [UInt8]) throws -> RecordFile.Loaded {
            try RecordFile.check(bytes: bytes, fileName: name, relativePath: "tables/t/" + name).get()
        }
        let bytes = SyncedMark.stamped(Self.record)
        let stamped = try check(bytes)
        #expect(stamped.bytesAreCanonical)
        #expect(SyncedMark.isIntact(stamped.record, bytes: bytes, bytesAreCanonical: true))
        // The server's copy in other layouts: not canonical, so encoded again, and found intact.
        let text = String(decoding: bytes, as: UTF8.self)
        for other in [
            String(text.dropLast()), CanonicalJSON.string(.object(stamped.record), style: .compact),
            text.replacingOccurrences(of: "\n  ", with: "\n\t")
        ] {
            let loaded = try check(Array(other.utf8))
            #expect(!loaded.bytesAreCanonical, "\(other)")
            #expect(
                SyncedMark.isIntact(loaded.record, bytes: loaded.bytes, bytesAreCanonical: loaded.bytesAreCanonical))
        }
        // An edit written in the canonical layout: not intact, told without encoding it again.
        var changed = stamped.record
        changed["text"] = "b"
        let edited = try check(RecordFile.encode(changed))
        #expect(edited.bytesAreCanonical)
        #expect(!SyncedMark.isIntact(edited.record, bytes: edited.bytes, bytesAreCanonical: true))
        // A file without an id takes it from its name: its bytes are not the encoding of the record read.
        var anonymous = stamped.record
        anonymous[SystemProperty.id] = nil
        #expect(try !check(RecordFile.encode(anonymous)).bytesAreCanonical)
    }

    @Test("a stamped copy is told from its bytes alone, with its id and version; anything else is left to a full read")
    func intactCopyFromBytes() throws {
        let bytes = SyncedMark.stamped(Self.record)
        let copy = try #require(SyncedMark.intactCopy(bytes))
        #expect(copy.id == "r1" && copy.version == "v1")
        var nested = Self.record
        nested["meta"] = ["id": "not the record's", "version": "nor this"]
        #expect(SyncedMark.intactCopy(SyncedMark.stamped(nested)).map { [$0.id, $0.version] } == ["r1", "v1"])
        let text = String(decoding: bytes, as: UTF8.self)
        for (what, other) in [
            ("an edit", text.replacingOccurrences(of: #""text": "a""#, with: #""text": "b""#)),
            ("re-indented", text.replacingOccurrences(of: "\n  ", with: "\n\t")),
            ("another mark", text.replacingOccurrences(of: #""@synced": ""#, with: #""@synced": "A"#)),
            ("no mark", String(decoding: RecordFile.encode(Self.record), as: UTF8.self)),
            ("cut short", String(text.prefix(text.count / 2)))
        ] {
            #expect(SyncedMark.intactCopy(Array(other.utf8)) == nil, "\(what)")
        }
        var escaped = Self.record
        escaped["id"] = "r\"1"
        #expect(SyncedMark.intactCopy(SyncedMark.stamped(escaped)) == nil, "an id that needs escaping: a full read")
    }

    // MARK: - What a scan finds

    @Test(
        "a changed file: every row of the rule",
        arguments: [
            // (pending, version, server's system properties, mark intact, entry: nil, .some(nil) or version, edited
            // while sent) → outcome
            (PendingOperation.Kind.update, "v1", true, false, "v1", false, FileChangeRule.Present.covered),
            (.insert, nil, false, false, nil, false, .covered),
            (.delete, "v1", true, true, "v1", false, .deleteConflict),
            (nil, "v1", true, true, nil, false, .serverCopy),
            (nil, "v1", true, true, "v1", false, .serverCopy),
            (nil, "v1", true, true, "v2", false, .uncompared),
            (nil, nil, false, false, nil, false, .created),
            (nil, nil, false, false, "v1", false, .uncompared),
            (nil, nil, false, false, "v1", true, .modified),
            (nil, "v1", false, false, "v1", false, .modified),
            (nil, "v1", true, false, "v1", false, .modified),
            (nil, "v1", true, false, "v2", false, .uncompared),
            (nil, "v1", true, false, "v2", true, .modified),
            (nil, "v1", true, false, nil, false, .uncompared)
        ] as [(PendingOperation.Kind?, String?, Bool, Bool, String?, Bool, FileChangeRule.Present)])
    func changedFile(
        _ pending: PendingOperation.Kind?, _ version: String?, _ serverVersion: Bool, _ intact: Bool, _ entry: String?,
        _ editedWhileSent: Bool, _ expected: FileChangeRule.Present
    ) {
        let file = FileChangeRule.File(version: version, carriesServerVersion: serverVersion, markIntact: intact)
        let indexed: String?? = entry.map { .some($0) } ?? .none
        #expect(
            FileChangeRule.decide(file, indexedVersion: indexed, editedWhileSent: editedWhileSent, pending: pending)
                == expected)
    }

    @Test("a missing file: deleted by hand where HEAD has it or outside git, removed by git where HEAD does not")
    func missingFile() {
        #expect(FileChangeRule.decideMissing(pending: .delete, inHead: false) == .covered)
        #expect(FileChangeRule.decideMissing(pending: .update, inHead: false) == .deleted)
        #expect(FileChangeRule.decideMissing(pending: .insert, inHead: nil) == .deleted)
        #expect(FileChangeRule.decideMissing(pending: nil, inHead: true) == .deleted)
        #expect(FileChangeRule.decideMissing(pending: nil, inHead: nil) == .deleted)
        #expect(FileChangeRule.decideMissing(pending: nil, inHead: false) == .removedByGit)
    }

    @Test("the mass-delete rule: more than half of a table of ten or more")
    func massDelete() {
        #expect(!MassDeleteBrake.refuses(removing: 9, of: 9), "a table of fewer than ten")
        #expect(!MassDeleteBrake.refuses(removing: 5, of: 10))
        #expect(MassDeleteBrake.refuses(removing: 6, of: 10))
        #expect(MassDeleteBrake.refuses(removing: 7, of: 12))
    }

    // MARK: - Clones and acknowledgements

    @Test("an operation is sent by the clone that queued it; one without origin by whoever holds it")
    func sentBy() throws {
        let own = PendingOperation(sequence: 1, kind: .update, table: "t", id: "a", origin: "clone-a", operationID: "x")
        let legacy = PendingOperation(sequence: 2, kind: .update, table: "t", id: "b")
        #expect(own.isSent(by: "clone-a") && !own.isSent(by: "clone-b") && !own.isSent(by: ""))
        #expect(own.isSent(by: nil), "outside git every operation is the store's own")
        #expect(legacy.isSent(by: "clone-b") && legacy.isSent(by: nil))
        #expect(try PendingOperation(json: own.json) == own, "origin and id survive the journal line")
    }

    @Test("a journal joined by git folds operations keeping their origins and ids, and drops those acknowledged")
    func journalKeepsIdentities() throws {
        let directory = TemporaryDirectory()
        let layout = StoreLayout(root: directory.path)
        try FileManager.default.createDirectory(
            atPath: layout.cacheDirectory + "/tmp", withIntermediateDirectories: true)
        let lines = [
            #"{"id":"a","op":"update","opid":"op-a","origin":"clone-a","seq":3,"table":"t","version":"v1"}"#,
            #"{"id":"b","op":"insert","opid":"op-b","origin":"clone-b","seq":2,"table":"t"}"#,
            #"{"id":"a","op":"update","opid":"op-a2","origin":"clone-b","seq":4,"table":"t","version":"v1"}"#,
            #"{"id":"c","op":"delete","opid":"op-c","origin":"clone-a","seq":5,"table":"t","version":"v7"}"#
        ]
        try directory.write("journal.jsonl", lines.joined(separator: "\n") + "\n")
        let journal = try Journal.load(layout: layout, acknowledged: ["op-c"])
        #expect(
            journal.operations.map(\.id) == ["b", "a"],
            "sorted by sequence, a folded, c acknowledged: \(journal.operations)")
        #expect(
            journal.pending(RecordKey(table: "t", id: "a"))?.operationID == "op-a",
            "an update over an update keeps the first")
        #expect(journal.pending(RecordKey(table: "t", id: "b"))?.origin == "clone-b")
        #expect(journal.needsRewriteOnSave)
    }

    @Test(
        """
        acknowledgements: every operation sent goes into the machine-local log, those that travelled through git into \
        sent.jsonl; lines git could not merge are skipped
        """
    )
    func acknowledgements() throws {
        let directory = TemporaryDirectory()
        let layout = StoreLayout(root: directory.path)
        try FileManager.default.createDirectory(
            atPath: layout.cacheDirectory + "/tmp", withIntermediateDirectories: true)
        let sent = [
            PendingOperation(sequence: 1, kind: .insert, table: "t", id: "a", origin: "c", operationID: "op-a"),
            PendingOperation(
                sequence: 2, kind: .update, table: "t", id: "b", baseVersion: "v1", origin: "c", operationID: "op-b"),
            PendingOperation(sequence: 3, kind: .update, table: "t", id: "c", baseVersion: "v1")
        ]
        try Acknowledgements.record(sent, committed: ["op-b"], layout: layout)
        #expect(Acknowledgements.load(layout: layout) == ["op-a", "op-b"])
        let committed = try directory.read("sent.jsonl")
        #expect(committed.contains(#""opid":"op-b""#) && !committed.contains("op-a"), "\(committed)")
        // A line of a union git could not make, and a line older than the retention: one skipped, one dropped on the
        // next write.
        let old = #"{"id":"z","op":"delete","opid":"op-z","sent":"2020-01-01T00:00:00.000Z","table":"t"}"#
        try directory.write("sent.jsonl", "<<<<<<< ours\n" + committed + old + "\n>>>>>>> theirs\n")
        #expect(Acknowledgements.load(layout: layout) == ["op-a", "op-b", "op-z"])
        try Acknowledgements.record(
            [PendingOperation(sequence: 4, kind: .insert, table: "t", id: "d", origin: "c", operationID: "op-d")],
            committed: ["op-d"], layout: layout)
        let rewritten = try directory.read("sent.jsonl")
        #expect(!rewritten.contains("op-z") && rewritten.contains("op-b") && rewritten.contains("op-d"), "\(rewritten)")
    }

    // MARK: - What the command line prints

    @Test("control and reordering characters are escaped; line ends, tabs and other text stay")
    func terminalText() {
        #expect(TerminalText.escaped("plain\ttext\nand é 漢字") == "plain\ttext\nand é 漢字")
        #expect(TerminalText.escaped("\u{1B}[31mred\u{07}") == "\\x1B[31mred\\x07")
        #expect(TerminalText.escaped("a\rb\u{7F}\u{85}") == "a\\x0Db\\x7F\\x85")
        #expect(TerminalText.escaped("x\u{202E}y\u{2066}") == "x\\u{202E}y\\u{2066}")
    }
}
