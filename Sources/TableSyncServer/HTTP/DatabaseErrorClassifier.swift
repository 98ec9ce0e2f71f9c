import HTTPTypes
import SyncProtocol

/// The answer to a database error (``DatabaseFailure``), worded for what the request was doing: a request that
/// caused it learns what to change (400, 413), a database that is busy, slow or away for now is a 503 with
/// `Retry-After`, and only faults of the server are left for the 500 that the middleware logs.
enum DatabaseErrorClassifier {
    /// What the request was doing when the database failed.
    enum Activity: Sendable {
        /// Reading a page of records through `$filter` and `$orderby`.
        case query
        /// Writing record `id` of `table`.
        case write(table: String, id: String)
        /// Anything else (reading one record by id).
        case other
    }

    /// Seconds a client is asked to wait before it sends a request again after a 503.
    static let retryAfterSeconds = 1

    /// The refusal for `error`, or `nil` when it is no database error or a fault of the server.
    static func refusal(for error: any Error, during activity: Activity = .other) -> ProtocolError? {
        guard let (failure, detail) = DatabaseFailure.classify(error) else { return nil }
        return refusal(failure, detail: detail, during: activity)
    }

    /// The refusal for `failure`; `nil` for a fault of the server.
    static func refusal(_ failure: DatabaseFailure, detail: String, during activity: Activity) -> ProtocolError? {
        switch (failure, activity) {
        case (.invalidInput, .write(let table, let id)):
            return .badRequest(
                """
                table \(table), record '\(id)': the database cannot store this record (\(detail)); change the value it \
                names
                """
            )
        case (.invalidInput, _):
            return .badRequest(
                """
                $filter cannot be evaluated on the stored records (\(detail)); \
                simplify the $filter or change its values
                """
            )
        case (.tooLarge, .write(let table, let id)):
            return ProtocolError(
                status: .contentTooLarge,
                message:
                    "table \(table), record '\(id)' is larger than the database can store (\(detail)); make it smaller")
        case (.tooLarge, _):
            return .badRequest(
                "$filter builds a value larger than the database can hold (\(detail)); simplify the $filter")
        case (.timedOut, _):
            return unavailable(
                """
                the database did not finish the request within the server's statement time limit, or the request was \
                cancelled (\(detail)); retry later, or narrow the $filter or lower $top
                """
            )
        case (.unavailable, _):
            return unavailable("the database is busy or unavailable for now (\(detail)); retry later")
        case (.unreachable, _):
            return ProtocolError(
                status: .serviceUnavailable, message: "the database cannot be reached (\(detail)); retry later",
                retryAfterSeconds: retryAfterSeconds, code: .databaseUnavailable)
        case (.fault, _):
            return nil
        }
    }

    private static func unavailable(_ message: String) -> ProtocolError {
        ProtocolError(status: .serviceUnavailable, message: message, retryAfterSeconds: retryAfterSeconds)
    }
}
