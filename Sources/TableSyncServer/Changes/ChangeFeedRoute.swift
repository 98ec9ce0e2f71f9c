import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import SyncProtocol

/// `GET /changes?tables=todo,notes&wait=25`, the change feed (``ChangeFeed``): a long poll that answers once one
/// of the listed tables changes as the caller sees it.
///
/// The answer is 200 with ``ChangeMarks`` and an `ETag` that is a digest of exactly that body. A request whose
/// `If-None-Match` holds the current `ETag` waits: for a change of one of its tables (200 with the new marks), for
/// `wait` seconds at most ``maxWaitSeconds`` (304), or for the server to stop (304 at once, as a stopping server
/// must not hold its clients until its shutdown timeout). No state per client stays on the server.
///
/// A wait holds no database connection and no bulk-read turn: the marks are read (one index probe per table) before
/// it, and again after each wake-up. Each listed table must be served (404, or 401 without credentials on a server
/// that checks them, as the table routes answer) and readable by the caller (``AccessRule``: 401, 403, 405 as a
/// list answers); in a per-user table the marks are the caller's own rows', so a change of another user's rows may
/// wake the request but never changes its answer.
struct ChangeFeedRoute: Sendable {
    /// The served tables by lowercased name.
    let tables: [String: TableOptions]
    let repository: any RecordRepository
    let notifier: ChangeNotifier
    let metrics: ServerMetrics
    let writer: ResponseWriter
    /// Whether the server has static tokens or JWT keys (``Authenticator/checksCredentials``).
    let checksCredentials: Bool
    /// The longest a request waits (``ServerConfiguration/changeWaitLimitSeconds``).
    let maxWaitSeconds: Int

    /// One table a request listed: the name it used, which keys its mark, and the records the caller reaches.
    struct Watched: Sendable {
        let name: String
        let scope: RecordScope
    }

    /// Adds `GET /changes`, behind ``ProtocolVersionMiddleware`` as every route of the table protocol.
    func register(on router: Router<TableRequestContext>) {
        router.group(RouterPath(TablePath.changes))
            .add(middleware: ProtocolVersionMiddleware())
            .get { request, context in try await answer(request, context) }
    }

    private func answer(_ request: Request, _ context: TableRequestContext) async throws -> Response {
        let watched = try watchedTables(context)
        let waitSeconds = min(try Self.waitSeconds(context.query) ?? maxWaitSeconds, maxWaitSeconds)
        let seen = Self.entityTags(request.headers[values: .ifNoneMatch])
        let deadline = ContinuousClock.now + .seconds(waitSeconds)
        let served = watched.map(\.scope.table)
        var waiting = false
        defer { if waiting { metrics.changeFeedWaiting.decrement() } }
        while true {
            let ticket = notifier.ticket(for: served)
            let marks = try await repository.lastUpdatedAt(in: watched.map(\.scope))
            let body = ChangeMarks(
                latest: Dictionary(
                    uniqueKeysWithValues: zip(
                        watched.map(\.name),
                        marks.map { mark in
                            mark.map(Timestamp.init(ticks:))
                        }))
            ).json
            let eTag = Self.eTag(of: CanonicalJSON.encode(body, style: .compact))
            if !seen.contains(eTag) {
                metrics.changeFeedAnswered(status: .ok)
                return writer.json(
                    body, status: .ok, request: request,
                    headers: [.eTag: eTag, .cacheControl: "no-store"])
            }
            if !waiting {
                waiting = true
                metrics.changeFeedWaiting.increment()
            }
            guard ContinuousClock.now < deadline, await wait(since: ticket, until: deadline) else {
                metrics.changeFeedAnswered(status: .notModified)
                return Response(status: .notModified, headers: [.eTag: eTag, .cacheControl: "no-store"])
            }
        }
    }

    /// Waits for a change of the ticket's tables until `deadline`; `false` when the time is up, the server is
    /// stopping or the request was cancelled, and the answer is a 304 without reading the marks again.
    private func wait(since ticket: ChangeNotifier.Ticket, until deadline: ContinuousClock.Instant) async -> Bool {
        let notifier = self.notifier
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await notifier.waitForChange(since: ticket) }
                group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
                await group.next()
                group.cancelAll()
            }
        }
        return !Task.isCancelled && !Task.isShuttingDownGracefully && ContinuousClock.now < deadline
    }

    /// The tables the `tables` parameter lists, each served and readable by the caller.
    private func watchedTables(_ context: TableRequestContext) throws(ProtocolError) -> [Watched] {
        let parameter = ChangeFeed.tablesParameter
        guard let list = try context.query.value(named: parameter), !list.isEmpty else {
            throw ProtocolError.badRequest(
                "\(parameter) is missing: list the tables to watch, comma-separated (\(parameter)=todo,notes)")
        }
        let names = list.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: " ") }
        guard names.count <= ChangeFeed.maxTables else {
            throw ProtocolError.badRequest(
                "\(parameter) lists \(names.count) tables; list at most \(ChangeFeed.maxTables)")
        }
        var seen: Set<String> = []
        var watched: [Watched] = []
        for name in names {
            guard !name.isEmpty else {
                throw ProtocolError.badRequest("\(parameter) '\(list)' has an empty table name")
            }
            guard seen.insert(name.lowercased()).inserted else {
                throw ProtocolError.badRequest("\(parameter) lists the table '\(name)' twice (table names ignore case)")
            }
            let table = try ServedTables(byName: tables, checksCredentials: checksCredentials)
                .table(named: name, identity: context.identity)
            let scope = try AccessRule.scope(
                of: table, for: .read, identity: context.identity,
                checksCredentials: checksCredentials)
            watched.append(Watched(name: name, scope: scope))
        }
        return watched
    }

    /// The `wait` parameter: whole seconds from 0, or `nil` when absent.
    static func waitSeconds(_ query: QueryString) throws(ProtocolError) -> Int? {
        guard let text = try query.value(named: ChangeFeed.waitParameter) else { return nil }
        guard let seconds = Int(text), seconds >= 0 else {
            throw ProtocolError.badRequest(
                "\(ChangeFeed.waitParameter) must be a whole number of seconds from 0, not '\(text)'")
        }
        return seconds
    }

    /// The entity tags of `If-None-Match` headers, quotes and all (`W/` dropped: marks compare by their bytes).
    static func entityTags(_ values: [String]) -> Set<String> {
        var tags: Set<String> = []
        for value in values {
            for part in value.split(separator: ",") {
                var tag = part.trimmingCharacters(in: " ")
                if tag.hasPrefix("W/") { tag.removeFirst(2) }
                tags.insert(tag)
            }
        }
        return tags
    }

    /// A strong `ETag` for `body`: its ``StableDigest``, quoted. It only has to change when the body does; a
    /// client echoes it and never reads it.
    static func eTag(of body: [UInt8]) -> String {
        "\"\(StableDigest.hex(body))\""
    }
}
