import SyncProtocol

/// One incremental pull query of `queries.json`: its table, its filter, and how far it has pulled.
package struct PullQuery: Sendable, Equatable {
    /// The query id (the .NET SDK's rule: no `|`, at most 255 characters).
    package var id: String
    /// The table it pulls.
    package var table: String
    /// The OData `$filter` it adds to every request, if any.
    package var filter: String?
    /// The `updatedAt` of the last record pulled, exactly as the server wrote it.
    package var updatedAt: String?
    /// The id of the last record pulled at ``updatedAt``: the keyset cursor's tie-break.
    package var lastID: String?
    /// Records the server sent that the store cannot hold, by id, with why: the watermark moved past them, so
    /// they are kept here for `status` until the server sends them again valid or deleted, or a purge resets
    /// the query.
    package var skipped: [String: String]

    /// A query `id` pulling `table`, optionally filtered, from a watermark (`nil`: from the start).
    package init(
        id: String, table: String, filter: String? = nil, updatedAt: String? = nil, lastID: String? = nil,
        skipped: [String: String] = [:]
    ) {
        self.id = id
        self.table = table
        self.filter = filter
        self.updatedAt = updatedAt
        self.lastID = lastID
        self.skipped = skipped
    }

    /// Moves the watermark to `watermark`, the end of `page`, and notes what the page says of skipped records.
    mutating func advance(to watermark: PullWatermark, past page: ServerPage) {
        updatedAt = watermark.updatedAt
        lastID = watermark.lastID
        noteSkipped(page)
    }

    /// Notes what `page` says of skipped records: refused ones are added (or forgotten when deleted on the server),
    /// and ones that came back valid are forgotten.
    mutating func noteSkipped(_ page: ServerPage) {
        for item in page.refused {
            guard let id = item.id else { continue }
            skipped[id] = item.deleted ? nil : item.reason
        }
        guard !skipped.isEmpty else { return }
        for record in page.records { skipped[record.id] = nil }
    }

    /// Why `id` is not a valid query id, or `nil`.
    package static func problem(withID id: String) -> String? {
        if id.isEmpty { return "a query id cannot be empty" }
        if id.count > 255 { return "a query id has at most 255 characters" }
        if id.contains("|") { return "a query id cannot contain '|'" }
        if id.containsControlCharacter {
            return "a query id cannot contain control characters"
        }
        return nil
    }
}
