import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

@Suite struct RecordFileNameTests {
    @Test(arguments: [
        ("a1b2-c3", "a1b2-c3.json"), ("Todo", "^todo.json"), ("a b", "a%20b.json"), ("é", "%C3%A9.json"),
        (".hidden", "%2Ehidden.json"), ("..a", "%2E.a.json"), ("con", "%63on.json"), ("NUL.txt", "^n^u^l.txt.json"),
        ("com1.x", "%63om1.x.json"), ("a~b", "a%7Eb.json"), ("%41", "%2541.json"), ("^a", "%5Ea.json"),
        ("conx", "conx.json"), ("co", "co.json"), ("lpt9.a.b", "%6Cpt9.a.b.json"), ("aux.", "%61ux..json"),
        ("nul-1", "nul-1.json")
    ])
    func namesAreReadableAndSafe(_ id: String, _ name: String) {
        #expect(RecordFileName.fileName(for: id) == name)
        #expect(RecordFileName.id(forFileName: name) == id)
    }

    @Test func randomIDsRoundTripAndNeverShareANameUnderCaseFolding() {
        var generator = SeededGenerator(seed: 11)
        let pieces: [String] = [
            "a", "A", "z", "Z", "0", "9", "-", "_", ".", " ", "é", "É", "e\u{301}", "ß", "ẞ", "İ", "ı",
            "😀", "中", "%", "^", "~", ":", "*", "<", ">", "|", "'", "\u{200B}", "ﬃ", "Ω", "Ω"
        ]
        var owners: [String: String] = [:]
        var checked = 0
        while checked < 5_000 {
            let length = Int.random(in: 1...12, using: &generator)
            let id = (0..<length).map { _ in pieces.randomElement(using: &generator)! }.joined()
            guard RecordID.isValid(id) else { continue }
            checked += 1
            let name = RecordFileName.fileName(for: id)
            #expect(RecordFileName.id(forFileName: name) == id, "\(id.debugDescription) → \(name)")
            #expect(name.utf8.allSatisfy { $0 < 0x80 }, "names are ASCII so Unicode normalisation cannot touch them")
            #expect(!name.hasPrefix("."))
            #expect(name.utf8.count <= RecordFileName.maximumNameLength)
            // Compare ids by their exact bytes: Swift's String equality would treat é and e+◌́ as one id.
            let folded = name.lowercased()
            let idBytes = String(decoding: Array(id.utf8), as: UTF8.self).utf8.map { String($0) }.joined(separator: ",")
            if let owner = owners[folded] {
                #expect(owner == idBytes, "two ids share \(folded) under case folding")
            } else {
                owners[folded] = idBytes
            }
        }
    }

    @Test func longIDsGetAHashedNameWithinTheLimit() {
        let long = String(repeating: "é", count: 200)
        let name = RecordFileName.fileName(for: long)
        #expect(name.utf8.count <= RecordFileName.maximumNameLength)
        #expect(RecordFileName.isHashed(name))
        #expect(RecordFileName.id(forFileName: name) == nil)
        #expect(RecordFileName.fileName(for: long + "x") != name)
        #expect(
            RecordFileName.fileName(for: String(repeating: "a", count: 250)) == String(repeating: "a", count: 250)
                + ".json")
        #expect(RecordFileName.isHashed(RecordFileName.fileName(for: String(repeating: "a", count: 251))))
    }

    @Test(arguments: [
        "a.txt", "^A.json", "%41.json", "%c3%a9.json", "a%2.json", "%FF.json", "%2F.json", "..json", "%2E.json"
    ])
    func namesTheMappingNeverProducesHaveNoID(_ name: String) {
        #expect(RecordFileName.id(forFileName: name) == nil)
    }

    @Test func sha256MatchesKnownVectors() {
        #expect(
            SHA256.hexDigest(of: Array("".utf8)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256.hexDigest(of: Array("abc".utf8))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hexDigest(of: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256.hexDigest(of: [UInt8](repeating: 0x61, count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}

@Suite struct LeftoverFileNameTests {
    @Test(arguments: [
        ("r.json~", true), ("r.json.orig", true), ("r.json.rej", true), ("r.json.bak", true), ("r.json.swp", true),
        ("#r.json#", true), ("4913", true), ("r.json___jb_tmp___", true), ("r.json.tmp", true),
        ("#", false), ("##", false), ("notes.txt", false), ("r.jsonx", false), ("4914", false)
    ])
    func byNameAlone(name: String, leftover: Bool) {
        #expect(LeftoverFileName.isLeftover(name) == leftover)
    }

    @Test(
        arguments: [
            ("r_BASE_1234.json", "r.json"), ("r_LOCAL_1.json", "r.json"), ("a_b_REMOTE_99.json", "a_b.json"),
            ("r_BACKUP_0.json", "r.json"), ("r_BASE_.json", nil), ("r_BASE_12a.json", nil), ("_BASE_12.json", nil),
            ("r_THEIRS_12.json", nil), ("r_BASE_12.txt", nil), ("r.json", nil)
        ] as [(String, String?)])
    func mergeToolCopies(name: String, original: String?) {
        #expect(LeftoverFileName.mergeToolOriginal(of: name) == original)
    }

    @Test func aMergeToolNameIsALeftoverOnlyBesideItsRecordFile() {
        #expect(LeftoverFileName.isLeftover("r_BASE_1234.json", besideRecordFile: { $0 == "r.json" }))
        #expect(
            !LeftoverFileName.isLeftover("r_BASE_1234.json", besideRecordFile: { _ in false }),
            "a record whose id ends so")
        #expect(LeftoverFileName.isLeftover("r.json~", besideRecordFile: { _ in false }))
    }

    @Test func gitFilesGainOnlyTheLinesTheyLackWhateverTheirLineEndings() {
        let wanted = ["journal.jsonl merge=union", "tables/** merge=tablesync"]
        #expect(StoreGitFiles.missingLines(wanted, in: "# x\r\njournal.jsonl merge=union\r\n") == [wanted[1]])
        #expect(
            StoreGitFiles.missingLines(wanted, in: "journal.jsonl merge=union\n  tables/** merge=tablesync \n").isEmpty)
        #expect(StoreGitFiles.appending(["b"], to: "a\r\n") == "a\r\nb\r\n", "a CRLF file gets CRLF lines")
        #expect(StoreGitFiles.appending(["b"], to: "a") == "a\nb\n")
        #expect(StoreGitFiles.appending(["b"], to: "") == "b\n")
    }
}
