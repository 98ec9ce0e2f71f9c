/// The change feed (``ProtocolExtension/changes``): a long poll that tells a client which of its tables changed,
/// so that it runs its usual incremental pull only then.
///
/// `GET /changes?tables=todo,notes&wait=25` answers 200 with ``ChangeMarks`` and an `ETag`. Sent again with
/// `If-None-Match: <that ETag>`, it answers once one of the listed tables changes as the caller sees it (200 with
/// the new marks), or after `wait` seconds (at most the server's ``ChangeFeedLimits/maxWaitSeconds``) with 304.
///
/// ```swift
/// let url = TablePath.changes + "?" + ChangeFeed.query(tables: ["todo", "notes"], waitSeconds: 25)
/// ```
public enum ChangeFeed {
    /// The query parameter that lists the tables, comma-separated.
    public static let tablesParameter = "tables"
    /// The query parameter that says how many whole seconds the server may wait for a change.
    public static let waitParameter = "wait"
    /// The most tables one request may list.
    public static let maxTables = 64

    /// The query string of a request for `tables` waiting at most `waitSeconds` (the server's limit without it).
    public static func query(tables: [String], waitSeconds: Int? = nil) -> String {
        var query = "\(tablesParameter)=\(tables.map(TablePath.percentEncodeQueryComponent).joined(separator: ","))"
        if let waitSeconds { query += "&\(waitParameter)=\(waitSeconds)" }
        return query
    }
}

/// The body of a change feed answer: for each table the request listed (by the name it used), the latest
/// `updatedAt` of the records the caller can see, deleted ones included, or `nil` when it sees none.
///
/// `{"tables": {"todo": "2026-11-27T04:31:27.123Z", "notes": null}}`
public struct ChangeMarks: Sendable, Equatable {
    /// The member of the body that holds the marks.
    public static let member = "tables"

    /// The latest `updatedAt` by table name.
    public var latest: [String: Timestamp?]

    /// Marks of `latest`.
    public init(latest: [String: Timestamp?]) {
        self.latest = latest
    }

    /// The marks as their JSON object.
    public var json: JSONValue {
        [Self.member: .object(latest.mapValues { $0.map { .string($0.text) } ?? .null })]
    }

    /// The tables whose mark differs from the one in `previous`, or that `previous` does not list: those a client
    /// pulls after this answer.
    public func tablesChanged(since previous: ChangeMarks) -> Set<String> {
        Set(latest.compactMap { table, mark in previous.latest[table].map { $0 == mark } == true ? nil : table })
    }

    /// The marks in a change feed answer's body, or `nil` when it holds none.
    public static func parse(_ body: JSONValue) -> ChangeMarks? {
        guard let tables = body[member]?.objectValue else { return nil }
        var latest: [String: Timestamp?] = [:]
        for (name, value) in tables {
            if value.isNull {
                latest[name] = .some(nil)
            } else {
                guard let text = value.stringValue, let stamp = Timestamp(parsing: text) else { return nil }
                latest[name] = stamp
            }
        }
        return ChangeMarks(latest: latest)
    }
}

/// The change feed's limits, announced in the health document under ``healthMember``, so that a client knows how
/// long a request may wait (its own time limit must be longer) and falls back to polling where they are missing.
public struct ChangeFeedLimits: Sendable, Equatable {
    /// The member of the health document that holds the limits.
    public static let healthMember = "changes"

    /// The longest a change feed request waits before the server answers 304.
    public var maxWaitSeconds: Int

    /// Limits of `maxWaitSeconds`.
    public init(maxWaitSeconds: Int) {
        self.maxWaitSeconds = maxWaitSeconds
    }

    /// The limits as their JSON object.
    public var json: JSONValue { ["maxWaitSeconds": .integer(Int64(maxWaitSeconds))] }

    /// The limits in a health document, or `nil` when it announces none.
    public static func parse(healthDocument: JSONValue) -> ChangeFeedLimits? {
        guard let seconds = healthDocument[healthMember]?["maxWaitSeconds"]?.integerValue, seconds > 0 else {
            return nil
        }
        return ChangeFeedLimits(maxWaitSeconds: Int(seconds))
    }
}
