import SyncProtocol

/// Where an incremental pull stands: the last `updatedAt` pulled (the server's exact text) and, for the keyset
/// cursor, the id of the last record pulled at that instant.
package struct PullWatermark: Sendable, Equatable {
    /// The last `updatedAt` pulled, exactly as the server wrote it.
    package var updatedAt: String
    /// The id of the last record pulled at ``updatedAt`` (the keyset cursor's tie-break).
    package var lastID: String?

    /// A watermark at `updatedAt`, after record `lastID`.
    package init(updatedAt: String, lastID: String?) {
        self.updatedAt = updatedAt
        self.lastID = lastID
    }
}

/// The next request of a pull, and how the cursor moves after each page: pure functions, so the paging rules
/// that peers got wrong (skipped rows, endless loops, re-downloads) are tested alone. The request itself is
/// `package`: the server's benchmark and plan tests ask exactly what a pull asks.
package enum PullPlan {
    /// How pages are walked.
    package enum Mode: Equatable {
        /// TableSync servers: `$orderby=updatedAt,id` and the cursor `(updatedAt, id)`. Never skips a row, never
        /// fetches one twice, whatever the number of rows sharing one timestamp.
        case keyset
        /// Other servers: the Azure SDKs' `updatedAt ge T` with `$skip` over the rows sharing `T`.
        case greaterOrEqualWithSkip
    }

    /// Whether a page ends the table without asking for another: only a v3 server says so, by a short page
    /// without `nextLink`; a v2 server may cap a page below `$top` without saying so, so there only an empty page
    /// ends it.
    static func isLastPage(apiVersion: Int, itemCount: Int, pageSize: Int, nextLink: String?) -> Bool {
        apiVersion == 3 && nextLink == nil && itemCount < pageSize
    }

    /// The query parameter that asks a server speaking `apiVersion` to count every record the query matches:
    /// `$count=true` in v3, `$inlinecount=allpages` in v2.
    static func countParameter(apiVersion: Int) -> (name: String, value: String) {
        apiVersion == 2 ? ("$inlinecount", "allpages") : ("$count", "true")
    }

    /// How a `$filter` for a server speaking `apiVersion` writes its date-times: `datetimeoffset'…'` in v2, which
    /// azure-mobile-apps-node parses; bare in v3, since Datasync's OData v4 parser refuses the prefixed form with 400
    /// (it reads `datetimeoffset'…'` as a string literal missing its opening quote), and tablesync-server reads both.
    static func dateTimeForm(apiVersion: Int) -> FilterPrinter.DateTimeForm {
        apiVersion == 2 ? .prefixed : .bare
    }

    /// The query parameters of the next page; `count` (``countParameter(apiVersion:)``) asks the server to count the
    /// records still to pull, which the first page of a pull does for its progress. The `$filter`'s date-times are
    /// written in `dateTimes` form (``dateTimeForm(apiVersion:)``).
    package static func query(
        mode: Mode, baseFilter: FilterExpression?, watermark: PullWatermark?, skip: Int, pageSize: Int,
        count: (name: String, value: String)? = nil, dateTimes: FilterPrinter.DateTimeForm = .prefixed
    ) -> [(name: String, value: String)] {
        var conditions: [FilterExpression] = []
        if let baseFilter { conditions.append(baseFilter) }
        if let watermark, let since = Timestamp(parsing: watermark.updatedAt) {
            let updatedAt = FilterExpression.property(SystemProperty.updatedAt)
            let instant = FilterExpression.literal(.dateTime(since))
            switch mode {
            case .keyset:
                if let lastID = watermark.lastID {
                    conditions.append(
                        .binary(
                            .or, .binary(.gt, updatedAt, instant),
                            .binary(
                                .and, .binary(.eq, updatedAt, instant),
                                .binary(.gt, .property(SystemProperty.id), .literal(.string(lastID))))))
                } else {
                    conditions.append(.binary(.gt, updatedAt, instant))
                }
            case .greaterOrEqualWithSkip:
                conditions.append(.binary(.ge, updatedAt, instant))
            }
        }
        var query: [(name: String, value: String)] = []
        if let filter = conditions.reduce(
            nil as FilterExpression?, { combined, next in combined.map { .binary(.and, $0, next) } ?? next })
        {
            query.append(("$filter", FilterPrinter.print(filter, dateTimes: dateTimes)))
        }
        query.append(("$orderby", mode == .keyset ? "updatedAt,id" : "updatedAt"))
        query.append(("$top", String(pageSize)))
        if mode == .greaterOrEqualWithSkip && skip > 0 { query.append(("$skip", String(skip))) }
        query.append(("__includeDeleted", "true"))
        if let count { query.append(count) }
        return query
    }

    /// The cursor after a non-empty page whose records are in server order.
    static func advance(
        mode: Mode, watermark: PullWatermark?, skip: Int, page: [[String: JSONValue]]
    ) -> (PullWatermark?, skip: Int) {
        guard let last = page.last, let lastText = last[SystemProperty.updatedAt]?.stringValue,
            let lastInstant = Timestamp(parsing: lastText)
        else { return (watermark, skip) }
        switch mode {
        case .keyset:
            return (PullWatermark(updatedAt: lastText, lastID: last[SystemProperty.id]?.stringValue), 0)
        case .greaterOrEqualWithSkip:
            let previous = watermark.flatMap { Timestamp(parsing: $0.updatedAt) }
            if let previous, lastInstant <= previous {
                // The whole page shares the watermark's instant: skip past it next time.
                return (watermark, skip + page.count)
            }
            let sharing = page.reversed().prefix { record in
                record[SystemProperty.updatedAt]?.stringValue.flatMap(Timestamp.init(parsing:)) == lastInstant
            }.count
            return (PullWatermark(updatedAt: lastText, lastID: nil), sharing)
        }
    }

    /// The page sizes tried, in turn, after a server refuses one: servers' maximums are most often one of these.
    static let pageSizeSteps = [500, 250, 100, 50, 25, 10]

    /// The page size to ask for after the server refused `refused` records with 400: the largest `$top` the server
    /// names when it is smaller, else the next smaller step; `nil` when nothing smaller is worth a try (the
    /// server's maximum is not below `refused`, so the refusal is about something else, or the steps ran out).
    static func smallerPageSize(than refused: Int, serverMaximum: Int?) -> Int? {
        if let serverMaximum { return serverMaximum >= 1 && serverMaximum < refused ? serverMaximum : nil }
        return pageSizeSteps.first { $0 < refused }
    }

    /// `false` when a keyset cursor did not move forward over a non-empty page: the same page again, or an
    /// older one. A server that keeps answering so would make the pull loop for ever.
    static func advances(from previous: PullWatermark?, to next: PullWatermark?) -> Bool {
        guard let next, next != previous else { return false }
        guard let previous, let before = Timestamp(parsing: previous.updatedAt),
            let after = Timestamp(parsing: next.updatedAt)
        else { return true }
        return after >= before
    }
}

extension PullPlan {
    /// A record of a page as far as repeating goes: its id and version.
    struct PageEntry: Equatable {
        var id: String?
        var version: String?
    }

    /// The page's records as ids and versions, in order.
    static func entries(of page: [[String: JSONValue]]) -> [PageEntry] {
        page.map { PageEntry(id: $0[SystemProperty.id]?.stringValue, version: $0[SystemProperty.version]?.stringValue) }
    }

    /// `true` when a `ge` + `$skip` page asked with a larger skip holds exactly the records of the previous page
    /// (ids and versions, in order): a server that ignores `$skip` answers so for ever.
    static func repeatsPreviousPage(
        mode: Mode, previous: [PageEntry], previousSkip: Int, page: [PageEntry], skip: Int
    ) -> Bool {
        mode == .greaterOrEqualWithSkip && skip > previousSkip && !page.isEmpty && page == previous
    }

    /// Remembers the previous page of a pull to stop one whose server ignores `$skip` (``repeatsPreviousPage``).
    struct RepeatedPageCheck {
        private var previous: (entries: [PageEntry], skip: Int)?

        /// Throws ``SyncError/malformedResponse(url:reason:)`` when `page`, asked with `skip`, repeats the previous
        /// one.
        mutating func check(mode: Mode, skip: Int, page: [[String: JSONValue]], url: String) throws {
            guard mode == .greaterOrEqualWithSkip else { return }
            let entries = PullPlan.entries(of: page)
            if let previous,
                PullPlan.repeatsPreviousPage(
                    mode: mode, previous: previous.entries, previousSkip: previous.skip,
                    page: entries, skip: skip)
            {
                throw SyncError.malformedResponse(
                    url: url,
                    reason:
                        """
                        the page asked with $skip=\(skip) holds the same \(page.count) records as the one asked with \
                        $skip=\(previous.skip), so the server ignores $skip; the pull stopped instead of asking again
                        """
                )
            }
            previous = (entries, skip)
        }
    }
}
