import SyncProtocol
import Testing
@testable import TableSync

/// Where a pull stands between pages (``PullPosition``), alone: how the cursor and the saved query move past a page,
/// and the pages a pull cannot go on from.
@Suite struct PullPositionTests {
    static func stamp(_ second: Int64) -> String { Timestamp(ticks: 17_000_000_000_000_000 + second * 10_000_000).text }

    /// A page of records, each an id at a second.
    static func page(_ records: [(id: String, second: Int64)]) -> ServerPage {
        ServerPage(
            items: records.map { record in
                .object(["id": .string(record.id), "updatedAt": .string(stamp(record.second)), "version": .string("v")])
            },
            nextLink: nil)
    }

    static let query = PullQuery(id: "q", table: "t")

    @Test("keyset: the cursor moves to the page's last record, and the saved query with it")
    func keysetMoves() throws {
        var position = PullPosition(query: Self.query, mode: .keyset, saving: true)
        #expect(position.watermark == nil)
        let step = try position.move(past: Self.page([("a", 1), ("b", 2)]), url: "u")
        #expect(step.advances)
        #expect(position.watermark == PullWatermark(updatedAt: Self.stamp(2), lastID: "b"))
        #expect(position.skip == 0)
        #expect(step.query?.updatedAt == Self.stamp(2))
        #expect(step.query?.lastID == "b")
        let next = try position.move(past: Self.page([("c", 2)]), url: "u")
        #expect(next.query?.lastID == "c")
    }

    @Test("a pull that saves no query moves its cursor all the same")
    func withoutSaving() throws {
        var position = PullPosition(query: Self.query, mode: .keyset, saving: false)
        let step = try position.move(past: Self.page([("a", 1)]), url: "u")
        #expect(step == PullPosition.Step(advances: true, query: nil))
        #expect(position.watermark == PullWatermark(updatedAt: Self.stamp(1), lastID: "a"))
    }

    @Test("keyset: a page ending where the previous one ended does not advance, and saves nothing")
    func keysetRepeat() throws {
        let saved = PullQuery(id: "q", table: "t", updatedAt: Self.stamp(2), lastID: "b")
        var position = PullPosition(query: saved, mode: .keyset, saving: true)
        let step = try position.move(past: Self.page([("a", 1), ("b", 2)]), url: "u")
        #expect(step == PullPosition.Step(advances: false, query: nil))
    }

    @Test("ge + $skip: a page that shares the watermark's instant moves the skip, not the watermark")
    func greaterOrEqualSkips() throws {
        var position = PullPosition(query: Self.query, mode: .greaterOrEqualWithSkip, saving: true)
        let first = try position.move(past: Self.page([("a", 1), ("b", 1)]), url: "u")
        #expect(first.advances)
        #expect(position.watermark == PullWatermark(updatedAt: Self.stamp(1), lastID: nil))
        #expect(position.skip == 2)
        #expect(first.query?.updatedAt == Self.stamp(1))
        let second = try position.move(past: Self.page([("c", 1), ("d", 1)]), url: "u")
        #expect(second.advances)
        #expect(position.skip == 4)
    }

    @Test("ge + $skip: the previous page again, asked with a larger skip, stops the pull")
    func greaterOrEqualIgnoredSkip() throws {
        var position = PullPosition(query: Self.query, mode: .greaterOrEqualWithSkip, saving: true)
        let page = Self.page([("a", 1), ("b", 1)])
        _ = try position.move(past: page, url: "u")
        #expect(throws: SyncError.self) { try position.move(past: page, url: "u") }
    }

    @Test("a page of which no item places a cursor stops the pull")
    func withoutCursor() {
        var position = PullPosition(query: Self.query, mode: .keyset, saving: true)
        let page = ServerPage(items: [.object(["id": .string("a")])], nextLink: nil)
        #expect(throws: SyncError.self) { try position.move(past: page, url: "u") }
    }
}
