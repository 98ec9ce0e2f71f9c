import HTTPTypes
import SyncProtocol
@testable import TableSyncServer
import Testing

/// The rules of conditional requests as pure functions (issue 45, item 5), case by case after Datasync's
/// `InternalExtensions_Tests.cs`.
@Suite struct RecordPreconditionsTests {
    /// Datasync's test entity: `UpdatedAt` 2023-11-13T12:53:13.123Z, `Version` AQBCIkeP.
    static let updatedAt = Timestamp(parsing: "2023-11-13T12:53:13.123Z")!.ticks
    static let version = "AQBCIkeP"
    static let matching = "\"AQBCIkeP\""
    static let nonMatching = "\"Foo\""
    static let earlier = "Mon, 13 Nov 2023 11:57:00 GMT"
    static let later = "Mon, 13 Nov 2023 14:30:00 GMT"
    /// The entity's `Last-Modified`.
    static let lastModified = "Mon, 13 Nov 2023 12:53:13 GMT"

    static func conditions(_ header: String, _ value: String) throws -> RecordPreconditions {
        var fields = HTTPFields()
        fields[HTTPField.Name(header)!] = value
        return try RecordPreconditions(headers: fields)
    }

    /// InternalExtensions_Tests.cs, ParseConditionalRequest_Success and ParseConditionalRequest_Failure: the
    /// method, the header, its value and the outcome (`nil`: the request goes on).
    static let outcomes: [(isRead: Bool, header: String, value: String, status: Int?)] = [
        (true, "If-Match", matching, nil), (true, "If-None-Match", nonMatching, nil),
        (true, "If-Modified-Since", earlier, nil), (true, "If-Unmodified-Since", later, nil),
        (false, "If-Match", matching, nil), (false, "If-None-Match", nonMatching, nil),
        (false, "If-Modified-Since", earlier, nil), (false, "If-Unmodified-Since", later, nil),
        (true, "If-Match", nonMatching, 412), (true, "If-None-Match", matching, 304),
        (true, "If-Modified-Since", later, 304), (true, "If-Unmodified-Since", earlier, 412),
        (false, "If-Match", nonMatching, 412), (false, "If-None-Match", matching, 412),
        (false, "If-Modified-Since", later, 412), (false, "If-Unmodified-Since", earlier, 412),
        // EntityTagHeaderValue_Matches_Working: * matches, a weak tag never does.
        (true, "If-None-Match", "*", 304), (true, "If-Match", "*", nil), (true, "If-Match", "W/\(matching)", 412),
        (true, "If-None-Match", "W/\(matching)", nil), (false, "If-None-Match", "W/\(matching)", nil),
        (true, "If-None-Match", "\(nonMatching), \(matching)", 304),
        // Last-Modified sent back: the record is unchanged since (RFC 9110; Datasync answers 200 and 412 here).
        (true, "If-Modified-Since", lastModified, 304), (false, "If-Unmodified-Since", lastModified, nil),
        (false, "If-Modified-Since", "Mon, 13 Nov 2023 12:53:12 GMT", nil),
        (false, "If-Unmodified-Since", "Mon, 13 Nov 2023 12:53:12 GMT", 412),
        // A date that is not an HTTP date is ignored.
        (true, "If-Modified-Since", "tomorrow", nil), (false, "If-Unmodified-Since", "2023-11-13", nil)
    ]

    @Test(arguments: outcomes)
    func outcome(isRead: Bool, header: String, value: String, status: Int?) throws {
        let outcome = try Self.conditions(header, value).outcome(
            version: Self.version, updatedAt: Self.updatedAt, isRead: isRead)
        switch (outcome, status) {
        case (.proceed, nil), (.notModified, 304?), (.preconditionFailed, 412?): break
        default: Issue.record("\(isRead ? "GET" : "write") \(header): \(value) gave \(outcome), not \(status ?? 200)")
        }
    }

    /// If-Match and If-None-Match take precedence over the dates, as in ParseConditionalRequest.
    @Test func tagsOverrideDates() throws {
        var fields = HTTPFields()
        fields[.ifMatch] = Self.matching
        fields[.ifUnmodifiedSince] = Self.earlier
        fields[.ifNoneMatch] = Self.nonMatching
        fields[.ifModifiedSince] = Self.later
        let outcome = try RecordPreconditions(headers: fields).outcome(
            version: Self.version, updatedAt: Self.updatedAt, isRead: true)
        #expect(outcome == .proceed)
    }

    @Test func malformedTagsAreRefused() {
        #expect(throws: ProtocolError.self) { try Self.conditions("If-None-Match", "AQBCIkeP") }
        #expect(throws: ProtocolError.self) { try Self.conditions("If-Match", ",") }
    }

    /// AddHeadersFromEntity_AddLastModifiedHeader: 2023-11-13T13:30:05.1234Z is `Mon, 13 Nov 2023 13:30:05 GMT`.
    @Test func lastModifiedIsAnHTTPDate() throws {
        let ticks = try #require(Timestamp(parsing: "2023-11-13T13:30:05.1234Z")).ticks
        #expect(HTTPDate.format(ticks: ticks) == "Mon, 13 Nov 2023 13:30:05 GMT")
        #expect(HTTPDate.format(ticks: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(ticks: -1) == "Wed, 31 Dec 1969 23:59:59 GMT")
        #expect(HTTPDate.parse("Mon, 13 Nov 2023 13:30:05 GMT") == ticks - 1_234_000)
        #expect(HTTPDate.parse("Monday, 13-Nov-23 13:30:05 GMT") == nil)
        #expect(HTTPDate.parse("Mon, 13 Nov 2023 13:30:05 UTC") == nil)
    }
}
