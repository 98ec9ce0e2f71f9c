import HTTPTypes
import SyncProtocol

/// The conditional headers of a request on one record (`If-Match`, `If-None-Match`, `If-Modified-Since`,
/// `If-Unmodified-Since`), and what they ask of the record the server holds, as Datasync's server decides it
/// (`InternalExtensions.ParseConditionalRequest`):
///
/// 1. `If-Match` that matches none of the record's tags: 412.
/// 2. Without `If-Match`, `If-Unmodified-Since` before the record's `Last-Modified`: 412.
/// 3. `If-None-Match` that matches: 304 on a read, 412 on a write.
/// 4. Without `If-None-Match`, `If-Modified-Since` at or after the record's `Last-Modified`: 304 on a read, 412 on a
///    write.
///
/// A weak tag (`W/"…"`) never matches, and `*` matches any record. A date that is not an HTTP date is ignored.
/// Dates compare with `Last-Modified`, `updatedAt` in whole seconds, as RFC 9110 compares them: Datasync compares
/// them with the whole `updatedAt` and strictly, so a client that sends back the `Last-Modified` it read would never
/// get a 304 and always a 412 there. Both agree whenever the dates are a second or more apart.
///
/// ```swift
/// let conditions = RecordPreconditions(ifNoneMatch: try EntityTagList("\"AAAB\"", header: "If-None-Match"))
/// conditions.outcome(version: "AAAB", updatedAt: ticks, isRead: true)   // .notModified
/// ```
struct RecordPreconditions: Sendable {
    var ifMatch: EntityTagList?
    var ifNoneMatch: EntityTagList?
    /// `If-Modified-Since`, in ticks.
    var ifModifiedSince: Int64?
    /// `If-Unmodified-Since`, in ticks.
    var ifUnmodifiedSince: Int64?

    /// What a request asks of the record.
    enum Outcome: Equatable, Sendable {
        /// The request goes on.
        case proceed
        /// 304: the client's copy is current (reads only).
        case notModified
        /// 412: the record is not in the state the request expects; the answer carries the server's copy.
        case preconditionFailed(reason: String)
    }

    /// The conditions of `headers`; a malformed entity tag list is a 400.
    init(headers: HTTPFields) throws(ProtocolError) {
        ifMatch = try headers[.ifMatch].map { value throws(ProtocolError) in
            try EntityTagList(value, header: "If-Match")
        }
        ifNoneMatch = try headers[.ifNoneMatch].map { value throws(ProtocolError) in
            try EntityTagList(value, header: "If-None-Match")
        }
        ifModifiedSince = headers[.ifModifiedSince].flatMap(HTTPDate.parse)
        ifUnmodifiedSince = headers[.ifUnmodifiedSince].flatMap(HTTPDate.parse)
    }

    init(
        ifMatch: EntityTagList? = nil, ifNoneMatch: EntityTagList? = nil, ifModifiedSince: Int64? = nil,
        ifUnmodifiedSince: Int64? = nil
    ) {
        self.ifMatch = ifMatch
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
        self.ifUnmodifiedSince = ifUnmodifiedSince
    }

    /// The precondition that the record has exactly `version` (a batch operation's `version`).
    init(version: String) { self.init(ifMatch: EntityTagList(version: version)) }

    /// What the conditions ask of a record with `version` and `updatedAt` (ticks), read (`GET`) or written.
    func outcome(version: String, updatedAt: Int64, isRead: Bool) -> Outcome {
        if let ifMatch, !ifMatch.matches(version) {
            return .preconditionFailed(reason: "If-Match does not match its version")
        }
        let lastModified = Self.wholeSeconds(updatedAt)
        if ifMatch == nil, let ifUnmodifiedSince, lastModified > ifUnmodifiedSince {
            return .preconditionFailed(reason: "it was modified after If-Unmodified-Since")
        }
        if let ifNoneMatch, ifNoneMatch.matches(version) {
            return isRead ? .notModified : .preconditionFailed(reason: "If-None-Match matches its version")
        }
        if ifNoneMatch == nil, let ifModifiedSince, lastModified <= ifModifiedSince {
            return isRead ? .notModified : .preconditionFailed(reason: "it was not modified since If-Modified-Since")
        }
        return .proceed
    }

    /// `ticks` cut to the second before them, as `Last-Modified` writes them.
    static func wholeSeconds(_ ticks: Int64) -> Int64 {
        let remainder = (ticks % Timestamp.ticksPerSecond + Timestamp.ticksPerSecond) % Timestamp.ticksPerSecond
        return ticks - remainder
    }

    /// Throws the 412 (with the server's copy) that the conditions ask for `record` on a write, if any.
    func check(_ record: StoredRecord, id: String) throws(ProtocolError) {
        if case .preconditionFailed(let reason) = outcome(
            version: record.version, updatedAt: record.updatedAt, isRead: false)
        {
            throw ProtocolError.preconditionFailed("the record '\(id)' has changed: \(reason)", record: record)
        }
    }
}

/// `*` or a list of entity tags, as `If-Match` and `If-None-Match` carry them.
struct EntityTagList: Sendable, Equatable {
    /// `*`: any record.
    let any: Bool
    /// The strong tags, unquoted; weak tags are dropped since they never match.
    let strongTags: [String]

    /// Parses `value`, the header `header`'s; anything but `*` or quoted tags (`"…"` or `W/"…"`) is a 400.
    init(_ value: String, header: String) throws(ProtocolError) {
        let trimmed = value.trimmingCharacters(in: " ")
        if trimmed == "*" {
            any = true
            strongTags = []
            return
        }
        var tags: [String] = []
        var count = 0
        for part in trimmed.split(separator: ",") {
            var tag = part.trimmingCharacters(in: " ")
            let weak = tag.hasPrefix("W/")
            if weak { tag.removeFirst(2) }
            guard tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else {
                throw ProtocolError.badRequest("\(header) must be \"version\" in double quotes or *, not '\(value)'")
            }
            count += 1
            if !weak { tags.append(String(tag.dropFirst().dropLast())) }
        }
        guard count > 0 else { throw ProtocolError.badRequest("\(header) is empty") }
        any = false
        strongTags = tags
    }

    /// The list of the one tag `version`.
    init(version: String) {
        any = false
        strongTags = [version]
    }

    /// `true` when the list names `version` by a strong tag, or is `*`.
    func matches(_ version: String) -> Bool { any || strongTags.contains(version) }
}
