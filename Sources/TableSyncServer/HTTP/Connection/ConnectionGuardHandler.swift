import NIOCore
import NIOHTTP1
import SyncProtocol

/// Guards one HTTP/1.x connection, between NIO's HTTP decoder and Hummingbird, where the protocol version, the
/// request head as sent and the decoder's errors are still visible:
///
/// - Deadlines (``RequestDeadlines``): a head that arrives too slowly or a body that does is answered 408 and the
///   connection closed; a kept-alive connection without requests is closed.
/// - A `Content-Length` above the body limit is answered 413 at once, without waiting for the body; so is a chunk
///   announced over it (400 for a size of more digits than a count holds), which ``ByteArrivalHandler`` reports.
/// - An HTTP/1.1 request without `Host`, or any request with more than one, is answered 400 (RFC 9112, 3.2).
/// - A request that does not keep the connection alive (HTTP/1.0 without `keep-alive`, or `Connection: close` in any
///   case or list) reaches the router with `Connection: close` exactly, so that the answer says `close` too; the
///   connection is closed after an answer that says `close`.
/// - A request that is not valid HTTP gets a JSON 400 (431 for headers over the limit) instead of an empty one; so
///   does a body whose framing is broken (a chunk size that is not hexadecimal or too large, a chunk not followed
///   by CRLF), whose request the router already holds and would otherwise wait for for ever.
/// - A client that goes away before its answer is written has its connection closed at once.
///
/// Answers the guard writes itself are JSON like every other, say `Connection: close`, and wait for the answers
/// the router still owes to earlier pipelined requests, which HTTP/1.1 sends in order.
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What the guard needs to know of the server's configuration.
    struct Settings: Sendable {
        let headerTimeout: TimeAmount
        let bodyTimeout: TimeAmount
        let idleTimeout: TimeAmount
        /// ``ServerConfiguration/maxBodySize``.
        let maxBodySize: Int
        /// The value of the extensions header every answer carries.
        let extensionsHeader: String
        /// Where the guard counts its own answers and the requests whose clients went away.
        let metrics: ServerMetrics
    }

    /// An answer the guard writes itself, as the last on its connection.
    private struct FinalAnswer {
        let status: HTTPResponseStatus
        let message: String
        /// `true` when the request it answers has been counted as unanswered (its head arrived).
        let answersReadHead: Bool

        /// Whether the answer is due with `unanswered` requests still owed an answer: once the requests before the
        /// one it answers are answered. The router may have answered a request whose body then turned out broken
        /// (it refused the request without reading the body): fewer are then owed, and the answer is not written.
        func isDue(unanswered: Int) -> Bool { unanswered <= (answersReadHead ? 1 : 0) }

        /// Whether the request it answers has been answered already (by the router), so that only the connection's
        /// close is left to do.
        func isAnswered(unanswered: Int) -> Bool { answersReadHead && unanswered == 0 }
    }

    private let settings: Settings
    private var deadlines: RequestDeadlines
    private var timer: Scheduled<Void>?
    private var timerDeadline: RequestDeadlines.Deadline?
    private var context: ChannelHandlerContext?
    /// Set once the connection is ending: what the client sends from then on is dropped.
    private var refusing = false
    private var finalAnswer: FinalAnswer?
    /// Between an answer's head and its end.
    private var answering = false
    /// An answer said `Connection: close`: the connection closes once the last owed answer is written.
    private var closeAfterAnswers = false
    /// The router has a request's head and not yet its end: a body it is reading.
    private var routerReadsBody = false
    /// A chunked request's head was just handed to the router: the limit its chunks must keep to.
    private var chunkedBodyLimit: Int?

    init(settings: Settings) {
        self.settings = settings
        deadlines = RequestDeadlines(
            headerTimeout: settings.headerTimeout, bodyTimeout: settings.bodyTimeout,
            idleTimeout: settings.idleTimeout, openedAt: .now())
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        reschedule()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Closed under requests still owed, and not by the guard: the client reset the connection.
        if !refusing, deadlines.unanswered > 0 {
            settings.metrics.requestsAbandoned.increment(by: Int64(deadlines.unanswered))
        }
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    /// Bytes arrived from the client (``ByteArrivalHandler``, in front of the decoder).
    func bytesArrived() {
        deadlines.bytesArrived(at: .now())
        reschedule()
    }

    /// Once the connection is ending, what the client sends is dropped.
    var isRefusing: Bool { refusing }

    /// The limit of the chunked body whose head was handed to the router since the last call, if one was.
    func takeChunkedBodyStart() -> Int? {
        defer { chunkedBodyLimit = nil }
        return chunkedBodyLimit
    }

    /// A chunk of the body being read announces more than the body may hold (``ByteArrivalHandler``): 413, or 400
    /// for a size of more digits than a count of bytes holds.
    func chunkTooLarge(overflow: Bool) {
        if overflow {
            refuse(
                .badRequest,
                message:
                    """
                    the request body's framing is not valid HTTP/1.1: a chunk size has more than \
                    \(ChunkedBodyScan.maximumSizeDigits) hexadecimal digits; send chunks of at most \
                    \(settings.maxBodySize) bytes
                    """,
                answersReadHead: true)
        } else {
            refuse(
                .payloadTooLarge,
                message: ProtocolError.payloadTooLarge(limit: settings.maxBodySize).message
                    + " (its chunks announce more); send a smaller body", answersReadHead: true)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refusing else { return }
        switch unwrapInboundIn(data) {
        case .head(var head):
            deadlines.headReceived(at: .now())
            if let length = head.headers.first(name: "content-length").flatMap(Int.init),
                length > Self.largestAcceptedBody(maxBodySize: settings.maxBodySize, gzip: Self.isGzip(head.headers))
            {
                refuse(
                    .payloadTooLarge,
                    message: ProtocolError.payloadTooLarge(limit: settings.maxBodySize).message
                        + " (Content-Length: \(length)); send a smaller body", answersReadHead: true)
                return
            }
            if let problem = Self.hostProblem(head) {
                refuse(.badRequest, message: problem, answersReadHead: true)
                return
            }
            if !head.isKeepAlive { head.headers.replaceOrAdd(name: "connection", value: "close") }
            routerReadsBody = true
            if Self.isChunked(head.headers) {
                chunkedBodyLimit = Self.largestAcceptedBody(
                    maxBodySize: settings.maxBodySize, gzip: Self.isGzip(head.headers))
            }
            context.fireChannelRead(wrapInboundOut(.head(head)))
        case .body(let bytes):
            context.fireChannelRead(wrapInboundOut(.body(bytes)))
        case .end(let trailers):
            deadlines.requestEnded(at: .now())
            routerReadsBody = false
            context.fireChannelRead(wrapInboundOut(.end(trailers)))
        }
        reschedule()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            answering = true
            if Self.saysClose(head.headers) { closeAfterAnswers = true }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            answering = false
            deadlines.answerEnded(at: .now())
            if finalAnswer?.isAnswered(unanswered: deadlines.unanswered) == true {
                // The router answered the request whose body broke: this answer is the connection's last.
                finalAnswer = nil
                closeAfterAnswers = true
            }
            if closeAfterAnswers, deadlines.unanswered == 0 {
                let written = promise ?? context.eventLoop.makePromise()
                written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
                context.writeAndFlush(data, promise: written)
            } else {
                context.write(data, promise: promise)
            }
            writeFinalAnswerIfDue()
            reschedule()
        }
    }

    /// A client that closes its side of the connection while an answer is owed has gone away (as a proxy in front
    /// does when its own client left): the connection is closed, which cancels the request and its database
    /// statement (``GuardedHTTP1Channel``). With nothing owed, the end of input ends the connection as usual.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed? = event as? ChannelEvent, deadlines.unanswered > 0 {
            settings.metrics.requestsAbandoned.increment(by: Int64(deadlines.unanswered))
            refusing = true
            reschedule()
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if error == .headerOverflow {
            refuse(
                .requestHeaderFieldsTooLarge,
                message: "the request's headers are larger than this server accepts; send fewer or shorter headers",
                answersReadHead: false)
        } else if deadlines.isReadingBody {
            refuse(
                .badRequest,
                message:
                    """
                    the request body's framing is not valid HTTP/1.1 (\(error)); send Transfer-Encoding: chunked \
                    bodies as chunks of a hexadecimal size line, CRLF, the bytes and CRLF, ending with a chunk of size 0
                    """,
                answersReadHead: true)
        } else {
            refuse(
                .badRequest,
                message:
                    """
                    the request is not valid HTTP/1.1 (\(error)); send a request line such as GET /tables/todo \
                    HTTP/1.1, then Name: value header lines
                    """,
                answersReadHead: false)
        }
    }

    // MARK: Deadlines

    private func reschedule() {
        let next = refusing ? nil : deadlines.deadline
        guard next != timerDeadline else { return }
        timer?.cancel()
        timer = nil
        timerDeadline = next
        guard let next, let context else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: next.at) { [self] in
            timer = nil
            timerDeadline = nil
            deadlinePassed(next.kind)
        }
    }

    private func deadlinePassed(_ kind: RequestDeadlines.Kind) {
        switch kind {
        case .idle:
            refusing = true
            context?.close(promise: nil)
        case .header:
            refuse(
                .requestTimeout,
                message:
                    """
                    the request's line and headers did not arrive within \(Self.seconds(settings.headerTimeout)) s of \
                    its first byte; the connection is closed
                    """,
                answersReadHead: false)
        case .body:
            refuse(
                .requestTimeout,
                message:
                    """
                    the request body did not arrive within \(Self.seconds(settings.bodyTimeout)) s of its headers; the \
                    connection is closed
                    """,
                answersReadHead: true)
        }
    }

    // MARK: The guard's own answers

    private func refuse(_ status: HTTPResponseStatus, message: String, answersReadHead: Bool) {
        guard !refusing else { return }
        refusing = true
        settings.metrics.connectionRefused(status: Int(status.code))
        finalAnswer = FinalAnswer(status: status, message: message, answersReadHead: answersReadHead)
        reschedule()
        writeFinalAnswerIfDue()
    }

    /// Writes the final answer once every earlier answer is written, then closes the connection.
    private func writeFinalAnswerIfDue() {
        guard let answer = finalAnswer, !answering, let context, answer.isDue(unanswered: deadlines.unanswered)
        else { return }
        finalAnswer = nil
        if answer.isAnswered(unanswered: deadlines.unanswered) {
            context.close(promise: nil)
            return
        }
        if routerReadsBody {
            // The request the answer refuses is the router's, its body cut short. Closing the connection would end
            // that body as if it were whole (what arrived of a chunked body may be a whole record): it ends in an
            // error instead, and the request is dropped.
            routerReadsBody = false
            context.fireErrorCaught(RequestBodyCut())
        }
        let body = CanonicalJSON.encode(ProtocolErrorBody.make(answer.message), style: .compact)
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/json; charset=utf-8")
        headers.add(name: "content-length", value: String(body.count))
        headers.add(name: "connection", value: "close")
        headers.add(name: ProtocolHeader.extensions, value: settings.extensionsHeader)
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: answer.status, headers: headers))),
            promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
    }

    // MARK: Rules

    /// The largest `Content-Length` that can hold a body within `maxBodySize` (measured after decompression): a
    /// gzip body may be a little larger than what it holds, by deflate's stored blocks (5 bytes per 16 KiB) and
    /// gzip's own 18 bytes.
    static func largestAcceptedBody(maxBodySize: Int, gzip: Bool) -> Int {
        gzip ? maxBodySize + maxBodySize / 3000 + 64 : maxBodySize
    }

    /// `true` when the body is framed as chunks (`Transfer-Encoding` ending in `chunked`, in any case).
    static func isChunked(_ headers: HTTPHeaders) -> Bool {
        headers[canonicalForm: "transfer-encoding"].last?.lowercased() == "chunked"
    }

    static func isGzip(_ headers: HTTPHeaders) -> Bool {
        headers[canonicalForm: "content-encoding"].contains { $0.lowercased() == "gzip" || $0.lowercased() == "x-gzip" }
    }

    /// Why `head` breaks RFC 9112's rule for `Host` (section 3.2: an HTTP/1.1 request has exactly one, an HTTP/1.0
    /// request at most one), or `nil` when it keeps it.
    static func hostProblem(_ head: HTTPRequestHead) -> String? {
        let hosts = head.headers["host"].count
        if hosts > 1 { return "the request has \(hosts) Host headers; send one" }
        if hosts == 0, head.version.major > 1 || head.version.minor >= 1 {
            return "an HTTP/1.1 request needs a Host header; send Host: followed by the server's name (and port)"
        }
        return nil
    }

    /// `true` when a `Connection` header names `close` (in any case, alone or in a list).
    static func saysClose(_ headers: HTTPHeaders) -> Bool {
        headers[canonicalForm: "connection"].contains { $0.lowercased() == "close" }
    }

    private static func seconds(_ amount: TimeAmount) -> String {
        let seconds = Double(amount.nanoseconds) / 1e9
        return seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

/// The end of a request body the guard refused (its framing broke, or it stalled past the body timeout): what the
/// router reading it gets instead of the body's end.
struct RequestBodyCut: Error, CustomStringConvertible {
    var description: String { "the request body was cut short by the connection's guard" }
}
