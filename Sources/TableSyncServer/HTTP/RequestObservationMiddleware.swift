import Hummingbird
import Logging

/// The outermost middleware (``ProtocolResponseMiddleware`` comes next, so the answer it records is the one sent):
/// gives each request its id and records its answer.
///
/// - The id is the client's `X-Request-ID` when ``RequestIdentifier/accepts(_:)`` takes it, a new one otherwise; every
///   log line written for the request carries it (metadata `hb.request.id`), and the answer returns it in
///   `X-Request-ID`, so a client's report and the server's log meet.
/// - Every answer is counted by route pattern, method and status, with its duration (``ServerMetrics``), and logged at
///   `debug`.
struct RequestObservationMiddleware: RouterMiddleware {
    typealias Context = TableRequestContext

    let metrics: ServerMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let id = request.headers[.requestID].flatMap { RequestIdentifier.accepts($0) ? $0 : nil } ?? context.id
        context.logger[metadataKey: RequestIdentifier.logMetadataKey] = "\(id)"
        let started = ContinuousClock.now
        metrics.requestsInFlight.increment()
        defer { metrics.requestsInFlight.decrement() }
        var response = try await next(request, context)
        response.headers[.requestID] = id
        let duration = ContinuousClock.now - started
        // Hummingbird names a path that matches no route `NotFound`.
        let route = context.endpointPath ?? "NotFound"
        metrics.requestAnswered(route: route, method: request.method, status: response.status, duration: duration)
        context.logger.debug(
            "answered",
            metadata: [
                "method": "\(request.method)", "path": "\(request.uri.path)", "route": "\(route)",
                "status": "\(response.status.code)",
                "seconds": "\(duration / .seconds(1))"
            ])
        return response
    }
}
