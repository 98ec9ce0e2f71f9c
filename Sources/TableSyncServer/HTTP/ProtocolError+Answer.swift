import Hummingbird

/// A ``ProtocolError`` as Hummingbird answers it, and the refusal that other errors stand for.
extension ProtocolError: HTTPResponseError {
    /// The answer to this refusal (uncompressed; ``ProtocolResponseMiddleware`` compresses large ones).
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        ResponseWriter(gzipMinimumSize: .max).error(self, request: request)
    }

    /// `error` as the refusal of the request it stands for: a ``ProtocolError`` as it is, a `$filter` that cannot
    /// be translated as a 400, a database error as ``DatabaseErrorClassifier`` answers it during `activity`. `nil`
    /// for a fault of the server.
    static func refusal(
        for error: any Error, during activity: DatabaseErrorClassifier.Activity = .other
    ) -> ProtocolError? {
        switch error {
        case let refusal as ProtocolError: return refusal
        case let error as FilterTranslationError: return .badRequest("$filter: \(error.reason)")
        default: return DatabaseErrorClassifier.refusal(for: error, during: activity)
        }
    }
}
