import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Requests over `URLSession`: the transport on Apple platforms, where it waits without spinning and the system's
/// own proxy and certificate settings apply. On Linux (FoundationNetworking) it runs too, and the transport tests
/// run against it, so the Apple path is exercised on every platform; ``CurlTransport`` stays Linux's transport,
/// because FoundationNetworking's `URLSession` polls while it waits.
///
/// `URLSession` inflates gzip answers itself, so an answer's body arrives decoded and its size on the wire is
/// the `Content-Length` the server sent; the body limit is checked once the body is in.
package final class URLSessionTransport: HTTPTransport {
    /// The process's transport: one session, so connections are reused.
    package static let shared = URLSessionTransport()

    private let session: URLSession

    private init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        session = URLSession(configuration: configuration)
    }

    package func exchange(_ request: TransportRequest) async throws -> TransportAnswer {
        guard let url = URL(string: request.url) else {
            throw TransportFailure.couldNotConnect("the URL \(request.url) is not valid")
        }
        var outgoing = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
        outgoing.httpMethod = request.method
        for (name, value) in request.headers { outgoing.setValue(value, forHTTPHeaderField: name) }
        outgoing.httpBody = request.body.map { Data($0) }
        let exchange = SessionExchange(session: session, request: outgoing)
        // `timeoutInterval` limits the time between bytes; the whole attempt is limited here. Both the limit and a
        // cancellation cancel the data task itself, including one that comes before the task has started.
        let limit = Task {
            try await Task.sleep(nanoseconds: UInt64(request.timeout * 1_000_000_000))
            exchange.cancel(timedOut: true)
        }
        defer { limit.cancel() }
        let (data, response) = try await withTaskCancellationHandler {
            try await exchange.run()
        } onCancel: {
            exchange.cancel(timedOut: false)
        }
        guard let http = response as? HTTPURLResponse else {
            throw TransportFailure.couldNotConnect("the answer is not HTTP")
        }
        guard data.count <= request.maxBodyBytes else { throw TransportFailure.tooLarge }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            guard let name = name as? String, let value = value as? String else { continue }
            headers[name.lowercased()] = value
        }
        let wireSize = http.expectedContentLength >= 0 ? Int(http.expectedContentLength) : data.count
        return TransportAnswer(
            status: http.statusCode, headers: headers, body: [UInt8](data), bodyIsDecoded: true, wireBodySize: wireSize)
    }

    static func failure(_ error: URLError) -> any Error {
        switch error.code {
        case .cancelled: return CancellationError()
        case .timedOut: return TransportFailure.timedOut
        case .cannotConnectToHost: return TransportFailure.connectionRefused
        case .networkConnectionLost: return TransportFailure.connectionLost
        case .cannotFindHost, .dnsLookupFailed: return TransportFailure.unknownHost
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid:
            return TransportFailure.untrustedCertificate(error.localizedDescription)
        default: return TransportFailure.couldNotConnect(error.localizedDescription)
        }
    }
}

/// One request of ``URLSessionTransport`` as a data task, cancelled by a task's cancellation or by the attempt's
/// time limit, whichever comes first, even before the data task exists.
private final class SessionExchange: Sendable {
    private struct State {
        var task: URLSessionDataTask?
        var cancelled = false
        var timedOut = false
    }

    private let session: URLSession
    private let request: URLRequest
    private let state = Mutex(State())

    init(session: URLSession, request: URLRequest) {
        self.session = session
        self.request = request
    }

    /// Starts the data task and waits for its answer.
    func run() async throws -> (Data, URLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            let task = session.dataTask(with: request) { data, response, error in
                if let data, let response, error == nil {
                    continuation.resume(returning: (data, response))
                } else {
                    continuation.resume(throwing: self.failure(error))
                }
            }
            let cancelledAlready = state.withLock { state in
                state.task = task
                return state.cancelled
            }
            task.resume()
            if cancelledAlready { task.cancel() }
        }
    }

    /// Cancels the request; `timedOut` says that the time limit did.
    func cancel(timedOut: Bool) {
        let task = state.withLock { state in
            if !state.cancelled { (state.cancelled, state.timedOut) = (true, timedOut) }
            return state.task
        }
        task?.cancel()
    }

    private func failure(_ error: (any Error)?) -> any Error {
        let (cancelled, timedOut) = state.withLock { ($0.cancelled, $0.timedOut) }
        if timedOut { return TransportFailure.timedOut }
        if cancelled { return CancellationError() }
        guard let error = error as? URLError else { return TransportFailure.couldNotConnect("no answer") }
        return URLSessionTransport.failure(error)
    }
}
