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
        json(bytes: CanonicalJSON.encode(value, style: .compact), status: status, request: request, headers: extra)
    }

    /// The answer whose body is `bytes`, JSON already encoded.
    func json(
        bytes: [UInt8], status: HTTPResponse.Status, request: Request, headers extra: HTTPFields = [:]
    ) -> Response {
        var headers = extra
        headers[.contentType] = "application/json; charset=utf-8"
        var bytes = bytes
        if bytes.count >= gzipMinimumSize, Self.acceptsGzip(request.headers[values: .acceptEncoding]),
           let compressed = try? Gzip.compress(bytes) {
            bytes = compressed
            headers[.contentEncoding] = "gzip"
        }
        headers[.vary] = "Accept-Encoding"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    func error(_ error: ProtocolError, request: Request) -> Response {
        var headers: HTTPFields = [:]
        if let record = error.record { headers[.eTag] = ResponseWriter.eTag(record.version) }
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
