import Hummingbird
import NIOCore
import SyncProtocol

/// The server's router: its middlewares in the order a request meets them, the health, readiness and metrics
/// routes, the table routes and the change feed.
struct ServerRoutes {
    let configuration: ServerConfiguration
    let database: ServerDatabase
    let repository: ChangeSignallingRepository
    let notifier: ChangeNotifier
    let authenticator: Authenticator

    func router() -> Router<TableRequestContext> {
        let metrics = database.metrics
        let availability = database.availability
        let authenticator = self.authenticator
        let writer = ResponseWriter(gzipMinimumSize: configuration.gzipMinimumSize)
        let router = Router(context: TableRequestContext.self)
        router.add(middleware: RequestObservationMiddleware(metrics: metrics))
        router.add(middleware: ProtocolResponseMiddleware(extensions: configuration.extensions, writer: writer))
        let health = self.health
        router.get(RouterPath(TablePath.health)) { request, _ in
            writer.json(.object(health), status: .ok, request: request)
        }
        router.get(RouterPath(DatabaseAvailability.readinessPath)) { request, _ -> Response in
            guard availability.isUp else { throw availability.refusal }
            return writer.json(.object(["status": "ready"]), status: .ok, request: request)
        }
        router.add(middleware: AuthenticationMiddleware(authenticator: authenticator))
        // Behind credentials when the server checks them, as the tables are: the counts tell of the server's clients.
        router.get(RouterPath(ServerMetrics.path)) { _, context -> Response in
            if authenticator.checksCredentials && context.identity == nil { throw ProtocolError.unauthorized }
            return Response(
                status: .ok, headers: [.contentType: ServerMetrics.contentType],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        router.add(middleware: DatabaseAvailabilityMiddleware(availability: availability))
        let tableRoutes = TableRoutes(configuration: configuration, repository: repository, metrics: metrics)
        tableRoutes.register(on: router)
        ChangeFeedRoute(
            tables: tableRoutes.tables, repository: repository, notifier: notifier, metrics: metrics,
            writer: writer, checksCredentials: configuration.checksCredentials,
            maxWaitSeconds: configuration.changeWaitLimitSeconds
        ).register(on: router)
        return router
    }

    /// What `GET /health` answers: the protocol versions and extensions served, and the batch and change feed limits.
    private var health: [String: JSONValue] {
        let extensions = configuration.extensions
        var health: [String: JSONValue] = [
            "status": "ok",
            "versions": .array(ProtocolVersion.allCases.map { .string($0.headerValue) }),
            "extensions": .array(ProtocolExtension.allCases.filter(extensions.contains).map { .string($0.rawValue) })
        ]
        if let limits = configuration.batchLimits { health[BatchLimits.healthMember] = limits.json }
        health[ChangeFeedLimits.healthMember] =
            ChangeFeedLimits(maxWaitSeconds: configuration.changeWaitLimitSeconds).json
        return health
    }
}
