import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1.1 connection with a ``ConnectionGuardHandler`` between NIO's decoder and Hummingbird's
/// codec: the server's deadlines, the early 413, `Connection: close` for requests that do not keep the connection
/// alive, and JSON answers to requests that are not HTTP. Requests are then served one after another, pipelined
/// ones in order, by Hummingbird, and cancelled when their connection closes.
struct GuardedHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let settings: ConnectionGuardHandler.Settings

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let guardHandler = ConnectionGuardHandler(settings: settings)
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(ByteArrivalHandler(guardHandler: guardHandler))
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: false, withErrorHandling: false, withOutboundHeaderValidation: false,
                withEncoderConfiguration: .init(), withDecoderLimitConfiguration: .init())
            try pipeline.addHandler(guardHandler)
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            // Closes idle connections when the server stops (the guard owns the deadlines).
            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
            return try NIOAsyncChannel(
                wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    /// Hummingbird answers a connection's requests on its task and learns that the client went away only when it
    /// writes; a connection that closes first (the client left, or the guard closed it) cancels that task, and with
    /// it the request in flight and its database statement.
    func handle(value: Value, logger: Logger) async {
        settings.metrics.connectionsOpen.increment()
        defer { settings.metrics.connectionsOpen.decrement() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await handleHTTP(asyncChannel: value, logger: logger) }
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
