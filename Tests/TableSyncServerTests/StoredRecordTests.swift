import Foundation
import SyncProtocol
import TableSyncServer
import Testing
import TestSupport

/// A stored row as the protocol sends it.
@Suite struct StoredRecordTests {
    @Test("version is the base64 of updatedAt's 8 big-endian bytes")
    func versionIsBase64OfUpdatedAt() {
        var generator = SeededGenerator(seed: 11)
        let values =
            [0, 1, -1, Int64.max, Int64.min, 17_000_000_000_000_000]
            + (0..<500).map { _ in Int64.random(in: .min ... .max, using: &generator) }
        for value in values {
            let bytes = (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: value) >> (56 - 8 * $0)) }
            #expect(RecordVersion.make(updatedAt: value) == Data(bytes).base64EncodedString(), "updatedAt \(value)")
        }
    }

    @Test(
        "the record as sent: its properties, or the selected ones, with the system properties over any of their names")
    func jsonCarriesSystemProperties() {
        let record = StoredRecord(
            id: "a", createdAt: 17_000_000_000_000_000, updatedAt: 17_000_000_000_010_000, deleted: false,
            properties: ["text": "x", "n": 1, "version": "forged"])
        let json = record.json()
        #expect(
            json
                == .object([
                    "id": "a", "text": "x", "n": 1, "deleted": false,
                    "createdAt": .string(Timestamp(ticks: 17_000_000_000_000_000).text),
                    "updatedAt": "2023-11-14T22:13:20.001Z",
                    "version": .string(RecordVersion.make(updatedAt: 17_000_000_000_010_000))
                ]))
        #expect(record.json(select: ["n"])["text"] == nil && record.json(select: ["n"])["n"] == 1)
        #expect(record.systemProperties.count == 5)
    }
}
