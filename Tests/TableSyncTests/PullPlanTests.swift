import SyncProtocol
import Testing
import TestSupport
@testable import TableSync
@testable import TableSyncStorage

/// The paging rules alone, against an in-memory table that answers `$filter`, `$orderby`, `$skip` and `$top` the
/// way a server does — including what our server never produces: many rows sharing one `updatedAt`.
@Suite struct PullPlanTests {
    /// Records where `groups` rows share each timestamp.
    static func table(groups: [Int]) -> [[String: JSONValue]] {
        var records: [[String: JSONValue]] = []
        for (group, size) in groups.enumerated() {
            let stamp = Timestamp(ticks: 17_000_000_000_000_000 + Int64(group) * 10_000).text
            for member in 0..<size {
                records.append([
                    "id": .string("g\(group)-\(String(format: "%03d", member))"), "updatedAt": .string(stamp)
                ])
            }
        }
        return records
    }

    /// One page as a server computes it, from the query parameters the plan produced.
    static func serve(
        _ records: [[String: JSONValue]], _ query: [(name: String, value: String)]
    ) throws -> [[String: JSONValue]] {
        var parameters: [String: String] = [:]
        for (name, value) in query { parameters[name] = value }
        var selected = records
        if let filter = parameters["$filter"] {
            let expression = try FilterParser.parse(filter)
            selected = selected.filter { FilterEvaluator.matches(expression, record: $0) }
        }
        let keys = try OrderByKey.parseList(try #require(parameters["$orderby"]))
        selected.sort { left, right in
            for key in keys {
                let a = left[key.property]!.stringValue!
                let b = right[key.property]!.stringValue!
                if key.property == "updatedAt" {
                    let (x, y) = (Timestamp(parsing: a)!, Timestamp(parsing: b)!)
                    if x != y { return x < y }
                } else if a != b {
                    return a.utf8.lexicographicallyPrecedes(b.utf8)
                }
            }
            return false
        }
        let skip = Int(parameters["$skip"] ?? "0")!
        let top = Int(try #require(parameters["$top"]))!
        return Array(selected.dropFirst(skip).prefix(top))
    }

    /// Runs a pull to the end and returns every record fetched, in order, and the final watermark.
    static func pull(
        _ records: [[String: JSONValue]], mode: PullPlan.Mode, pageSize: Int, from start: PullWatermark? = nil
    )
        throws -> (fetched: [String], watermark: PullWatermark?)
    {
        var watermark = start
        var skip = 0
        var fetched: [String] = []
        var repeatCheck = PullPlan.RepeatedPageCheck()
        for _ in 0..<10_000 {
            let page = try serve(
                records,
                PullPlan.query(mode: mode, baseFilter: nil, watermark: watermark, skip: skip, pageSize: pageSize))
            if page.isEmpty { return (fetched, watermark) }
            try repeatCheck.check(mode: mode, skip: skip, page: page, url: "memory")
            fetched += page.map { $0["id"]!.stringValue! }
            (watermark, skip) = PullPlan.advance(mode: mode, watermark: watermark, skip: skip, page: page)
        }
        Issue.record("the pull did not end")
        return (fetched, watermark)
    }

    @Test(arguments: [1, 2, 3, 100])
    func keysetNeverSkipsNorRepeatsWhateverSharesATimestamp(pageSize: Int) throws {
        let records = Self.table(groups: [1, 5, 1, 250, 2])
        let all = records.map { $0["id"]!.stringValue! }
        let (fetched, watermark) = try Self.pull(records, mode: .keyset, pageSize: pageSize)
        #expect(fetched == all, "every record once, in order")
        let (again, _) = try Self.pull(records, mode: .keyset, pageSize: pageSize, from: watermark)
        #expect(again.isEmpty, "nothing is fetched again once the watermark passed it")
        // A watermark saved in the middle of a group resumes exactly after it.
        let middle = records[100]
        let resumed = try Self.pull(
            records, mode: .keyset, pageSize: pageSize,
            from: PullWatermark(updatedAt: middle["updatedAt"]!.stringValue!, lastID: middle["id"]!.stringValue!))
        #expect(resumed.fetched == Array(all[101...]))
    }

    @Test(arguments: [1, 2, 3, 100])
    func greaterOrEqualWithSkipEndsAndMissesNothing(pageSize: Int) throws {
        let records = Self.table(groups: [1, 5, 1, 250, 2])
        let (fetched, watermark) = try Self.pull(records, mode: .greaterOrEqualWithSkip, pageSize: pageSize)
        #expect(
            Set(fetched) == Set(records.map { $0["id"]!.stringValue! }),
            "a group larger than a page does not loop for ever")
        #expect(watermark?.updatedAt == records.last!["updatedAt"]!.stringValue!)
        let (again, _) = try Self.pull(records, mode: .greaterOrEqualWithSkip, pageSize: pageSize, from: watermark)
        #expect(again.count == 2, "ge re-reads the rows at the watermark (the SDKs' behaviour), and no more")
    }

    @Test func aServerIgnoringSkipIsNoticedOnTheSecondPage() throws {
        // 250 records share one timestamp; the server answers every $skip with the first page.
        let records = Self.table(groups: [250])
        var watermark: PullWatermark?
        var skip = 0
        var repeatCheck = PullPlan.RepeatedPageCheck()
        var pages = 0
        #expect(throws: SyncError.self) {
            while pages < 100 {
                let query = PullPlan.query(
                    mode: .greaterOrEqualWithSkip, baseFilter: nil, watermark: watermark, skip: skip, pageSize: 10)
                let page = try Self.serve(records, query.filter { $0.name != "$skip" })
                pages += 1
                try repeatCheck.check(mode: .greaterOrEqualWithSkip, skip: skip, page: page, url: "memory")
                (watermark, skip) = PullPlan.advance(
                    mode: .greaterOrEqualWithSkip, watermark: watermark, skip: skip, page: page)
            }
        }
        #expect(pages == 2, "the first repeat stops the pull")
    }

    static let first: [PullPlan.PageEntry] = [.init(id: "a", version: "1"), .init(id: "b", version: "1")]

    /// previous page and skip, this page and skip, and whether that is a server ignoring `$skip`.
    static let repeats:
        [(previous: [PullPlan.PageEntry], previousSkip: Int, page: [PullPlan.PageEntry], skip: Int, repeats: Bool)] = [
            (first, 0, first, 2, true),
            (first, 2, first, 4, true),
            (first, 0, first, 0, false), // the same request again (a retry), not a growing skip
            (first, 2, first, 0, false), // the watermark moved and the skip restarted
            (first, 0, [.init(id: "a", version: "1"), .init(id: "c", version: "1")], 2, false),
            (first, 0, [.init(id: "a", version: "1"), .init(id: "b", version: "2")], 2, false), // b changed meanwhile
            (first, 0, [.init(id: "b", version: "1"), .init(id: "a", version: "1")], 2, false), // another order
            (first, 0, Array(first.prefix(1)), 2, false),
            ([], 0, [], 2, false)
        ]

    @Test func repeatedPageRule() {
        for (index, row) in Self.repeats.enumerated() {
            #expect(
                PullPlan.repeatsPreviousPage(
                    mode: .greaterOrEqualWithSkip, previous: row.previous, previousSkip: row.previousSkip,
                    page: row.page, skip: row.skip) == row.repeats, "row \(index)")
            #expect(
                !PullPlan.repeatsPreviousPage(
                    mode: .keyset, previous: row.previous, previousSkip: row.previousSkip,
                    page: row.page, skip: row.skip), "row \(index): keyset has its own rule")
        }
    }

    @Test func watermarkTextIsKeptExactly() {
        let page: [[String: JSONValue]] = [["id": "a", "updatedAt": "2024-05-01T10:20:30.1234567+02:00"]]
        let (watermark, _) = PullPlan.advance(mode: .keyset, watermark: nil, skip: 0, page: page)
        #expect(watermark?.updatedAt == "2024-05-01T10:20:30.1234567+02:00")
        let query = PullPlan.query(mode: .keyset, baseFilter: nil, watermark: watermark, skip: 0, pageSize: 10)
        #expect(
            query.first { $0.name == "$filter" }?.value.contains("datetimeoffset'2024-05-01T10:20:30.1234567+02:00'")
                == true)
    }

    /// Datasync's OData v4 parser refuses `datetimeoffset'…'` with 400: a v3 pull writes the watermark bare, a v2
    /// pull (azure-mobile-apps-node) keeps the prefixed form, and both are the server's text exactly.
    @Test func watermarkFormFollowsTheProtocolVersion() throws {
        let watermark = PullWatermark(updatedAt: "2024-05-01T10:20:30.123Z", lastID: nil)
        let expected = [
            2: "updatedAt ge datetimeoffset'2024-05-01T10:20:30.123Z'", 3: "updatedAt ge 2024-05-01T10:20:30.123Z"
        ]
        for (apiVersion, filter) in expected {
            let query = PullPlan.query(
                mode: .greaterOrEqualWithSkip, baseFilter: nil, watermark: watermark, skip: 0, pageSize: 10,
                dateTimes: PullPlan.dateTimeForm(apiVersion: apiVersion))
            let text = try #require(query.first { $0.name == "$filter" }?.value)
            #expect(text == filter)
            #expect(try FilterParser.parse(text) == FilterParser.parse(expected[2]!), "both forms mean the same")
        }
    }
}

@Suite struct PushOutcomeTests {
    static let sent: [String: JSONValue] = ["id": "a", "text": "mine"]
    static func body(_ record: [String: JSONValue]) -> [UInt8] { CanonicalJSON.encode(.object(record)) }
    static let theirs: [String: JSONValue] = [
        "id": "a", "text": "theirs", "version": "v2", "updatedAt": "2024-01-01T00:00:00Z", "deleted": false
    ]
    static let same: [String: JSONValue] = [
        "id": "a", "text": "mine", "version": "v2", "updatedAt": "2024-01-01T00:00:00Z", "deleted": false
    ]
    static let gone: [String: JSONValue] = [
        "id": "a", "text": "mine", "version": "v3", "updatedAt": "2024-01-02T00:00:00Z", "deleted": true
    ]

    @Test func classifiesEveryAnswer() throws {
        func classify(_ kind: PendingOperation.Kind, _ status: Int, _ body: [UInt8] = []) -> PushOutcome {
            PushOutcome.classify(
                kind: kind, sent: kind == .delete ? nil : Self.sent, response: HTTPResponse(status: status, body: body))
        }
        let (theirs, same, gone) = try (ServerRecord(Self.theirs), ServerRecord(Self.same), ServerRecord(Self.gone))
        #expect(classify(.insert, 201, Self.body(Self.same)) == .applied(same))
        #expect(classify(.update, 200, Self.body(Self.same)) == .applied(same))
        #expect(classify(.delete, 204) == .applied(nil))
        #expect(classify(.insert, 409, Self.body(Self.same)) == .applied(same), "lost acknowledgement of an insert")
        #expect(classify(.update, 412, Self.body(Self.same)) == .applied(same), "lost acknowledgement of an update")
        #expect(classify(.update, 412, Self.body(Self.theirs)) == .conflict(status: 412, server: theirs))
        #expect(classify(.insert, 409, Self.body(Self.theirs)) == .conflict(status: 409, server: theirs))
        #expect(
            classify(.update, 412, Self.body(Self.gone)) == .conflict(status: 412, server: gone),
            "deleted on the server is no ack")
        #expect(classify(.delete, 412, Self.body(Self.gone)) == .applied(gone))
        #expect(classify(.delete, 404) == .applied(nil))
        #expect(classify(.delete, 410) == .applied(nil))
        #expect(classify(.update, 404) == .conflict(status: 404, server: nil))
        #expect(classify(.update, 401) == .authenticationRefused(status: 401, message: nil))
        #expect(
            classify(.insert, 403, Array(#"{"error":"no"}"#.utf8))
                == .rejected(status: 403, message: PushOutcome.forbiddenReason("no")),
            "a 403 refuses the operation, not the credentials")
        #expect(classify(.delete, 403) == .rejected(status: 403, message: PushOutcome.forbiddenReason(nil)))
        #expect(classify(.insert, 400, Array(#"{"error":"bad id"}"#.utf8)) == .rejected(status: 400, message: "bad id"))
        #expect(
            classify(.insert, 201, Array("not json".utf8))
                == .damagedAnswer(status: 201, reason: "the answer holds no valid record"))
        #expect(
            classify(.insert, 201, Self.body(["id": "../../x"]))
                == .damagedAnswer(status: 201, reason: "the answer holds no valid record"))
        #expect(
            classify(.update, 200, Self.body([:]))
                == .damagedAnswer(status: 200, reason: "the answer holds no valid record"),
            "an empty object is no record either")
    }

    /// azure-mobile-apps-node 4.0.1 answers a duplicate insert with 409 and the item it was sent, without `version` or
    /// `updatedAt`: that body must not pass for the server's copy (it says what was sent, so it would count as
    /// applied).
    @Test func refusalWithoutTheServersCopyNeedsARead() throws {
        func classify(_ kind: PendingOperation.Kind, _ status: Int, _ body: [UInt8] = []) -> PushOutcome {
            PushOutcome.classify(
                kind: kind, sent: kind == .delete ? nil : Self.sent, response: HTTPResponse(status: status, body: body))
        }
        #expect(
            classify(.insert, 409, Self.body(Self.sent)) == .serverCopyNeeded(status: 409),
            "the submitted item echoed back")
        #expect(
            classify(.update, 412, Self.body(["id": "a", "text": "mine", "version": "v2"]))
                == .serverCopyNeeded(status: 412), "no updatedAt")
        #expect(
            classify(.update, 412, Self.body(["id": "a", "text": "mine", "updatedAt": "2024-01-01T00:00:00Z"]))
                == .serverCopyNeeded(status: 412), "no version")
        #expect(classify(.delete, 412) == .serverCopyNeeded(status: 412), "no body at all")

        func afterRead(_ kind: PendingOperation.Kind, _ copy: ServerRecord?) -> PushOutcome {
            PushOutcome.classify(
                kind: kind, sent: kind == .delete ? nil : Self.sent, refusedWith: 409, serverCopy: copy)
        }
        let (theirs, same, gone) = try (ServerRecord(Self.theirs), ServerRecord(Self.same), ServerRecord(Self.gone))
        #expect(afterRead(.insert, theirs) == .conflict(status: 409, server: theirs), "another record holds the id")
        #expect(afterRead(.insert, same) == .applied(same), "an earlier attempt's insert, acknowledgement lost")
        #expect(afterRead(.insert, gone) == .conflict(status: 409, server: gone))
        #expect(afterRead(.insert, nil) == .conflict(status: 409, server: nil))
        #expect(afterRead(.delete, gone) == .applied(gone))
        #expect(afterRead(.delete, nil) == .applied(nil))
        #expect(afterRead(.delete, theirs) == .conflict(status: 409, server: theirs))
    }
}

@Suite struct RetryPolicyTests {
    @Test func backsOffExponentiallyWithJitterAndHonoursRetryAfter() {
        let policy = RetryPolicy(maximumAttempts: 4, baseDelay: 0.5, maximumDelay: 3)
        #expect(policy.delay(afterAttempt: 1, retryAfter: nil, random: 1) == 0.5)
        #expect(policy.delay(afterAttempt: 2, retryAfter: nil, random: 1) == 1.0)
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, random: 0.5) == 1.0)
        #expect(policy.delay(afterAttempt: 4, retryAfter: nil, random: 1) == nil, "no attempts left")
        #expect(policy.delay(afterAttempt: 1, retryAfter: 2, random: 0) == 2)
        #expect(
            policy.delay(afterAttempt: 1, retryAfter: 600, random: 0) == 3, "a server cannot park the client for ever")
        #expect(RetryPolicy.none.delay(afterAttempt: 1, retryAfter: nil, random: 1) == nil)
        #expect(RetryPolicy.retryAfterSeconds(" 7 ") == 7)
        #expect(RetryPolicy.retryAfterSeconds("Wed, 21 Oct 2015 07:28:00 GMT") == nil)
        for status in [408, 429, 500, 502, 503, 504] { #expect(RetryPolicy.isRetryable(status: status)) }
        for status in [200, 400, 401, 404, 409, 412, 501] { #expect(!RetryPolicy.isRetryable(status: status)) }
    }

    @Test("a short page ends a table only where the server says so (v3); a v2 server may cap pages silently")
    func lastPage() {
        #expect(PullPlan.isLastPage(apiVersion: 3, itemCount: 7, pageSize: 10, nextLink: nil))
        #expect(!PullPlan.isLastPage(apiVersion: 3, itemCount: 7, pageSize: 10, nextLink: "next"))
        #expect(!PullPlan.isLastPage(apiVersion: 3, itemCount: 10, pageSize: 10, nextLink: nil))
        #expect(
            !PullPlan.isLastPage(apiVersion: 2, itemCount: 7, pageSize: 10, nextLink: nil),
            "only an empty page ends a v2 table")
    }
}

@Suite struct ServerTextTests {
    @Test("a server's words are repeated on one line: a line end cannot start a line that reads as the tool's own")
    func oneLine() {
        #expect(ServerText.oneLine("no such table") == "no such table")
        #expect(ServerText.oneLine("refused\ntablesync: pushed 0") == "refused\\ntablesync: pushed 0")
        #expect(ServerText.oneLine("a\r\nb") == "a\\r\\nb")
        #expect(
            PushOutcome.classify(
                kind: .insert, sent: [:], status: 400, body: ["error": "bad\nline"])
                == .rejected(status: 400, message: "bad\\nline"))
    }
}
