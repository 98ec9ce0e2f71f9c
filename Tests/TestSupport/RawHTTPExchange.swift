#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One HTTP/1.1 exchange written byte by byte on its own connection, for what a client library hides: the
/// `Connection` header and whether the server closes the connection after its answer.
public struct RawHTTPExchange: Sendable {
    /// The answer's status code, or 0 when none came.
    public var status: Int
    /// The answer's header lines (`Name: value`).
    public var headerLines: [String]
    /// `true` when the server closed the connection after the answer (the next read saw the end of the stream).
    public var closedByServer: Bool

    /// The value of the header `name` (any case), if the answer has it.
    public func header(_ name: String) -> String? {
        HTTPMessage(head: [""] + headerLines, body: []).header(name.lowercased())
    }

    /// Sends `request` (a whole HTTP/1.1 message, `\r\n` line ends) to `127.0.0.1:port` and reads one answer, then
    /// waits up to `closeWait` seconds for the server to close the connection.
    public static func send(_ request: String, port: Int, closeWait: Int = 5) -> RawHTTPExchange {
        guard let fd = LoopbackSocket.connected(port: port) else {
            return RawHTTPExchange(status: 0, headerLines: [], closedByServer: false)
        }
        defer { close(fd) }
        LoopbackSocket.sendAll(fd, Array(request.utf8))
        guard let answer = LoopbackSocket.readMessage(fd, isResponse: true) else {
            return RawHTTPExchange(status: 0, headerLines: [], closedByServer: false)
        }
        LoopbackSocket.setTimeout(fd, seconds: closeWait)
        var byte: UInt8 = 0
        let closed = recv(fd, &byte, 1, 0) == 0
        return RawHTTPExchange(
            status: answer.status, headerLines: Array(answer.head.dropFirst()), closedByServer: closed)
    }
}
