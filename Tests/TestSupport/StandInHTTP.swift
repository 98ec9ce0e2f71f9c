import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SyncProtocol

/// What the in-process stand-ins of other servers (``AzureNodeStandIn``, ``DatasyncStandIn``) read from a request
/// and how they write a JSON answer, shared so that each states only where its server differs.
enum StandInHTTP {
    /// The query string's parameters, decoded as a form.
    static func queryItems(_ query: String?) -> [String: String] {
        var items: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            items[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return items
    }

    /// The request's body parsed as JSON (at most 16 MiB).
    static func body(of request: Request) async throws -> JSONValue {
        try JSONParser.parse(Array(try await request.body.collect(upTo: 1 << 24).readableBytesView))
    }

    /// `body` as compact JSON with `status`, and `headers` beside the content type.
    static func json(_ status: Int, _ body: JSONValue, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(
            status: .init(code: status), headers: fields,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: CanonicalJSON.encode(body, style: .compact))))
    }
}
