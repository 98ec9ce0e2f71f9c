import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's own HTTP/1.1 connection (`HTTP1Channel`) with the connection guard placed around NIO's decoder:
/// a ``ByteArrivalHandler`` in front of it, and a ``ConnectionGuardHandler`` between it and Hummingbird's codec,
/// which enforce the server's deadlines, the early 413, `Connection: close` for requests that do not keep the
/// connection alive, and JSON answers to requests that are not HTTP. Requests are then served one after another,
/// pipelined ones in order, by Hummingbird, and cancelled when their connection closes.
///
/// Hummingbird's extension point, `HTTP1Channel.Configuration.additionalChannelHandlers`, puts handlers behind its
/// codec, where the bytes, the HTTP version and the first `Host` header are gone; docs/architecture.md says why the
/// guard needs them and what Hummingbird could offer instead.
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    /// Hummingbird's channel, which builds the pipeline and serves the requests.
    let http1: HTTP1Channel
    let settings: ConnectionGuardHandler.Settings

    init(responder: @escaping HTTPChannelHandler.Responder, settings: ConnectionGuardHandler.Settings) {
        // The guard owns the deadlines, so Hummingbird's idle timeout stays off; NIO's own limit of header fields.
        let decoder = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldCount: NIOHTTPDecoderLimitConfiguration().maxHeaderFieldCount)
        http1 = HTTP1Channel(
            responder: responder, configuration: .init(idleTimeout: nil, httpDecoderConfiguration: decoder))
        self.settings = settings
    }

    /// Hummingbird's pipeline, with the guard's two handlers around NIO's decoder. Runs on the channel's event loop.
    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let guardHandler = ConnectionGuardHandler(settings: settings)
        do {
            try channel.pipeline.syncOperations.addHandler(ByteArrivalHandler(guardHandler: guardHandler))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return http1.setup(channel: channel, logger: logger).assumeIsolated().flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(guardHandler, position: .after(decoder))
            return value
        }.nonisolated()
    }

    /// Hummingbird answers a connection's requests on its task and learns that the client went away only when it
    /// writes; a connection that closes first (the client left, or the guard closed it) cancels that task, and with
    /// it the request in flight and its database statement.
    func handle(value: Value, logger: Logger) async {
        settings.metrics.connectionsOpen.increment()
        defer { settings.metrics.connectionsOpen.decrement() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await http1.handle(value: value, logger: logger) }
            group.addTask { try? await value.channel.closeFuture.get() }
            await group.next()
            group.cancelAll()
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 through a ``GuardedHTTP1Channel``; wrap it for TLS (HummingbirdTLS's `.tls(_:tlsConfiguration:)`).
    static func guardedHTTP1(_ settings: ConnectionGuardHandler.Settings) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in GuardedHTTP1Channel(responder: responder, settings: settings) }
    }
}
