import Foundation
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
        guard let url = URL(string: request.url) else { throw TransportFailure.couldNotConnect("the URL \(request.url) is not valid") }
        var outgoing = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
        outgoing.httpMethod = request.method
        for (name, value) in request.headers { outgoing.setValue(value, forHTTPHeaderField: name) }
        outgoing.httpBody = request.body.map { Data($0) }
        let session = self.session, prepared = outgoing
        // `timeoutInterval` limits the time between bytes; the whole attempt is limited here.
        let (data, response) = try await withThrowingTaskGroup(of: (Data, URLResponse)?.self) { group in
            group.addTask {
                do {
                    return try await session.data(for: prepared)
                } catch let error as URLError {
                    throw Self.failure(error)
                }
            }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(request.timeout * 1_000_000_000))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let exchanged = first else { throw TransportFailure.timedOut }
            return exchanged
        }
        guard let http = response as? HTTPURLResponse else { throw TransportFailure.couldNotConnect("the answer is not HTTP") }
        guard data.count <= request.maxBodyBytes else { throw TransportFailure.tooLarge }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            guard let name = name as? String, let value = value as? String else { continue }
            headers[name.lowercased()] = value
        }
        let wireSize = http.expectedContentLength >= 0 ? Int(http.expectedContentLength) : data.count
        return TransportAnswer(status: http.statusCode, headers: headers, body: [UInt8](data), bodyIsDecoded: true, wireBodySize: wireSize)
    }

    private static func failure(_ error: URLError) -> any Error {
        switch error.code {
        case .cancelled: return CancellationError()
        case .timedOut: return TransportFailure.timedOut
        case .cannotConnectToHost: return TransportFailure.connectionRefused
        case .networkConnectionLost: return TransportFailure.connectionLost
        case .cannotFindHost, .dnsLookupFailed: return TransportFailure.unknownHost
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate, .serverCertificateNotYetValid:
            return TransportFailure.untrustedCertificate(error.localizedDescription)
        default: return TransportFailure.couldNotConnect(error.localizedDescription)
        }
    }
}
