import HummingbirdTesting
import SyncProtocol
@testable import TableSyncServer
import Testing
import TestSupport

/// `Connection: close` is answered with `Connection: close` and the connection is closed.
///
/// Stands for a keep-alive reverse proxy (nginx with `keepalive`, HAProxy) in front of the server: when the answer
/// did not say `close`, it kept the connection the server had closed and sent the next request into it (seen: 11 of
/// one suite's requests came back 502 through a proxy). RFC 9112 §9.6.
@Suite("Connection header")
struct ConnectionHeaderTests {
    @Test("a request that says Connection: close gets Connection: close and a closed connection; keep-alive stays open")
    func closeIsAnswered() async throws {
        try await withServer(.sqlite, tables: [TableOptions(name: "todo")], setup: .live) { client in
            let port = try #require(client.port)
            let closing = RawHTTPExchange.send(
                "GET /tables/todo HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\nConnection: close\r\n\r\n",
                port: port)
            #expect(closing.status == 200)
            #expect(closing.header("connection")?.lowercased() == "close")
            #expect(closing.closedByServer)

            let refused = RawHTTPExchange.send(
                "GET /tables/todo HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 9.0.0\r\nConnection: close\r\n\r\n",
                port: port)
            #expect(refused.status == 400, "an unknown ZUMO-API-VERSION")
            #expect(refused.header("connection")?.lowercased() == "close")

            let kept = RawHTTPExchange.send(
                "GET /tables/todo HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 3.0.0\r\n\r\n", port: port,
                closeWait: 1)
            #expect(kept.status == 200)
            #expect(kept.header("connection")?.lowercased() != "close")
            #expect(!kept.closedByServer)
        }
    }

    @Test("the close option is found in any case and in a list")
    func closeOption() {
        #expect(ProtocolResponseMiddleware.asksToClose(["close"]))
        #expect(ProtocolResponseMiddleware.asksToClose(["Upgrade, Close"]))
        #expect(!ProtocolResponseMiddleware.asksToClose(["keep-alive"]))
        #expect(!ProtocolResponseMiddleware.asksToClose([]))
    }
}
