import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import TableSync

/// The transport TableSync used before libcurl (AsyncHTTPClient on SwiftNIO, configured as it was), kept here
/// only so that T1 can run the same pulls and pushes through both in one run.
final class AsyncHTTPClientTransport: HTTPTransport {
    static let shared = AsyncHTTPClientTransport()

    private let client: HTTPClient

    private init() {
        var configuration = HTTPClient.Configuration()
        configuration.decompression = .disabled
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    func exchange(_ request: TransportRequest) async throws -> TransportAnswer {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let answer: HTTPClientResponse
        do {
            answer = try await client.execute(outgoing, timeout: .nanoseconds(Int64(request.timeout * 1_000_000_000)))
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw TransportFailure.timedOut
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw TransportFailure.couldNotConnect("\(error)")
        }
        var headers: [String: String] = [:]
        for (name, value) in answer.headers {
            let key = name.lowercased()
            headers[key] = headers[key].map { $0 + ", " + value } ?? value
        }
        do {
            let body = try await answer.body.collect(upTo: request.maxBodyBytes)
            return TransportAnswer(status: Int(answer.status.code), headers: headers, body: Array(body.readableBytesView))
        } catch is NIOTooManyBytesError {
            throw TransportFailure.tooLarge
        } catch {
            throw TransportFailure.connectionLost
        }
    }
}
