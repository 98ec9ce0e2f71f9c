import GzipCompression
import HTTPTypes
import Hummingbird
import NIOCore
import SyncProtocol

/// Writes JSON responses: compact canonical JSON, gzip-compressed when the client accepts it and the body is
/// large enough to gain from it.
struct ResponseWriter: Sendable {
    /// Bodies smaller than this are sent uncompressed (gzip's header and the CPU are not worth it).
    let gzipMinimumSize: Int

    func json(
        _ value: JSONValue, status: HTTPResponse.Status, request: Request, headers extra: HTTPFields = [:]
    ) -> Response {
        json(
            parts: [ByteBuffer(bytes: CanonicalJSON.encode(value, style: .compact))], status: status, request: request,
            headers: extra)
    }

    /// The answer whose body is `parts`, JSON already encoded, sent one after another (joined only to compress them).
    func json(
        parts: [ByteBuffer], status: HTTPResponse.Status, request: Request, headers extra: HTTPFields = [:]
    ) -> Response {
        var headers = extra
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.vary] = "Accept-Encoding"
        let size = parts.reduce(0) { $0 + $1.readableBytes }
        if size >= gzipMinimumSize, Self.acceptsGzip(request.headers[values: .acceptEncoding]),
            let compressed = try? Gzip.compress(parts.flatMap { $0.readableBytesView })
        {
            headers[.contentEncoding] = "gzip"
            return Response(
                status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: compressed)))
        }
        return Response(
            status: status, headers: headers,
            body: parts.count == 1 ? ResponseBody(byteBuffer: parts[0]) : ResponseBody(contentsOf: parts))
    }

    func error(_ error: ProtocolError, request: Request) -> Response {
        var headers: HTTPFields = [:]
        if let record = error.record { headers = TableRoutes.recordHeaders(record) }
        if error.status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if let seconds = error.retryAfterSeconds { headers[.retryAfter] = String(seconds) }
        if let methods = error.allowedMethods { headers[.allow] = methods.map(\.rawValue).joined(separator: ", ") }
        return json(error.body, status: error.status, request: request, headers: headers)
    }

    /// `"version"`, the `ETag` of a record.
    static func eTag(_ version: String) -> String { "\"\(version)\"" }

    /// `true` when an `Accept-Encoding` header lists gzip (or `*`) without `q=0`.
    static func acceptsGzip(_ values: [String]) -> Bool {
        for value in values {
            for item in value.split(separator: ",") {
                let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: " ") }
                guard let coding = parts.first?.lowercased(), coding == "gzip" || coding == "*" else { continue }
                let refused = parts.dropFirst().contains { parameter in
                    let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: " ") }
                    return pair.count == 2 && pair[0].lowercased() == "q" && Double(pair[1]) == 0
                }
                if !refused { return true }
            }
        }
        return false
    }
}
