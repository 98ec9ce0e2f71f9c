import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1.1 connection with a ``ConnectionGuardHandler`` between NIO's decoder and Hummingbird's
/// codec: the server's deadlines, the early 413, `Connection: close` for requests that do not keep the connection
/// alive, and JSON answers to requests that are not HTTP. Requests are then served one after another, pipelined
/// ones in order, by Hummingbird.
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
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 through a ``GuardedHTTP1Channel``; wrap it for TLS (HummingbirdTLS's `.tls(_:tlsConfiguration:)`).
    static func guardedHTTP1(_ settings: ConnectionGuardHandler.Settings) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in GuardedHTTP1Channel(responder: responder, settings: settings) }
    }
}
