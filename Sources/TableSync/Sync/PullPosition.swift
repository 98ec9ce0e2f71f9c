import SyncProtocol

/// Where a pull stands between its pages: the watermark and skip its next request starts from, and the query
/// saved with each page. Moving past a page checks that the pull can go on from it: its records place a cursor,
/// and it is not the previous page again (``PullPlan/RepeatedPageCheck``).
struct PullPosition {
    /// How the pull walks its pages.
    let mode: PullPlan.Mode
    /// The watermark the next page is asked after.
    private(set) var watermark: PullWatermark?
    /// The records at the watermark's instant that the next page skips (`ge` + `$skip` only).
    private(set) var skip = 0
    /// The query as saved, its watermark moved past each page that advances; `nil` for a pull that saves none.
    private var saved: PullQuery?
    private var repeatCheck = PullPlan.RepeatedPageCheck()

    /// What moving past one page tells the pull.
    struct Step: Equatable {
        /// `false` when a keyset page ends where the previous one ended: the page is written, then the pull stops
        /// rather than ask again for ever.
        let advances: Bool
        /// The query with its watermark past the page, to save once the page is in place; `nil` when nothing is
        /// saved (a pull without query id, or a page that does not advance).
        let query: PullQuery?
    }

    /// A pull of `query` from its watermark, walking pages as `mode` says; with `saving` (an incremental pull), the
    /// query moves past each page.
    init(query: PullQuery, mode: PullPlan.Mode, saving: Bool) {
        self.mode = mode
        watermark = query.updatedAt.map { PullWatermark(updatedAt: $0, lastID: query.lastID) }
        saved = saving ? query : nil
    }

    /// Moves past `page`, a page of items asked from this position. Throws ``SyncError/malformedResponse(url:reason:)``
    /// (naming `url`) when none of its items places a cursor, or when it holds the records of the previous page
    /// again (a server that ignores `$skip`).
    mutating func move(past page: ServerPage, url: String) throws -> Step {
        guard !page.cursorItems.isEmpty else { throw Self.withoutCursor(page, url: url) }
        try repeatCheck.check(mode: mode, skip: skip, page: page.cursorItems, url: url)
        let (next, nextSkip) = PullPlan.advance(mode: mode, watermark: watermark, skip: skip, page: page.cursorItems)
        let advances = mode != .keyset || PullPlan.advances(from: watermark, to: next)
        (watermark, skip) = (next, nextSkip)
        // A page that does not advance is written, but the watermark does not move past it.
        guard advances, saved != nil, let next else { return Step(advances: advances, query: nil) }
        saved?.advance(to: next, past: page)
        return Step(advances: advances, query: saved)
    }

    /// A page of records of which none has an id and an `updatedAt`: the pull cannot move past them.
    private static func withoutCursor(_ page: ServerPage, url: String) -> SyncError {
        .malformedResponse(
            url: url,
            reason: "none of the page's \(page.itemCount) records has an id and an updatedAt "
                + "(\(page.refused.first?.reason ?? "")), so the pull cannot move past them")
    }
}
