import SyncProtocol

/// What one request of the server's change feed (``ChangeFeed``) answered.
enum ChangeFeedAnswer: Sendable, Equatable {
    /// The marks of the listed tables (200): at once without an ETag or with an old one, or once a table changed.
    case marks(ChangeMarks, etag: String?)
    /// Nothing changed while the server waited (304).
    case unchanged
}

extension TableClient {
    /// One long poll of `GET /changes` for `tables`, waiting at most `waitSeconds` when `etag` (the last answer's)
    /// is given. The client's time limit must outlast the wait.
    /// - Throws: ``SyncError/authenticationRefused(status:message:)`` for 401/403,
    ///   ``SyncError/requestRefused(url:status:reason:)`` for another status,
    ///   ``SyncError/malformedResponse(url:reason:)`` when a 200 holds no marks,
    ///   ``SyncError/unreachable(url:reason:)`` when the server cannot be reached.
    func changes(tables: [String], waitSeconds: Int, etag: String?) async throws -> ChangeFeedAnswer {
        let request = HTTPRequest(
            method: "GET", path: TablePath.changes,
            query: [
                (ChangeFeed.tablesParameter, tables.joined(separator: ",")),
                (ChangeFeed.waitParameter, String(waitSeconds))
            ],
            headers: etag.map { ["If-None-Match": $0] } ?? [:])
        let response = try await http.send(request)
        if response.status == 304 { return .unchanged }
        let url = http.baseURL + request.pathAndQuery
        try Self.requireOK(response, url: url)
        guard let body = try? JSONParser.parse(response.body), let marks = ChangeMarks.parse(body) else {
            throw SyncError.malformedResponse(url: url, reason: "expected {\"\(ChangeMarks.member)\": {…}}")
        }
        return .marks(marks, etag: response.header("ETag"))
    }
}
